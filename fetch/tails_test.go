package fetch

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/tarutil"
)

// tailFiles is a package whose members have every kind of tail: none (a file of whole
// blocks, an empty one), all of a small file, the last partial block of a big one.
func tailFiles() []file {
	return []file{
		{"bin/tool", []byte("#!/bin/sh\necho tool\n")},
		{"share/blocks", randomData(20, 2*tarutil.Alignment)},
		{"share/big", randomData(21, 3*tarutil.Alignment+123)},
		{"share/empty", nil},
		{"share/small", randomData(22, tarutil.Alignment-1)},
		{"share/bigtail", randomData(23, tarutil.Alignment+tarutil.MaxInline+1)},
	}
}

// tailsDir is where the cache keeps the tails of the entry with this sha256.
func (c *Cache) tailsDir(sha string) string { return filepath.Join(c.dir, "tars", tailsName(sha)) }

// checkTailFiles fails unless the entry of p keeps, for each member with a tail that an
// entry of the kind keeps, a file holding the tar's bytes from the tail's offset to the
// member's end, and nothing else.
func checkTailFiles(t *testing.T, c *Cache, p repo.Package, kind tailKind) {
	t.Helper()
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	tar, err := os.ReadFile(c.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	small := tarutil.DataFiles(ms) <= smallTailsFiles
	for _, m := range ms {
		off, _ := m.Tail()
		if !kind.keeps(&m, small) {
			continue
		}
		want = append(want, tailName(off))
		got, err := os.ReadFile(filepath.Join(c.tailsDir(p.SHA256), tailName(off)))
		if err != nil || !bytes.Equal(got, tar[off:m.Offset+m.Size]) {
			t.Errorf("tail of %s: %d bytes (%v), want the tar's %d from %d", m.Name, len(got), err, m.Offset+m.Size-off, off)
		}
	}
	ents, err := os.ReadDir(c.tailsDir(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tail files %q, want %q", got, want)
	}
}

// TestTails: on XFS a fetched entry keeps a tail file for each member whose bytes no
// clone of the tar's blocks covers (four of the six here), which go with the entry; the
// tmp/ directory they were written in is gone. On btrfs, where an install clones and
// truncates a larger member's last block of at most tarutil.MaxInline bytes, it keeps
// those of the members under a block and the longer tail.
func TestTails(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			c := shareCache(t, kind)
			files := tailFiles()
			dir, ps := sharedRepo(t, [][]file{files})
			p := ps[0]
			if err := fetchOne(c, quick(t, dir), p); err != nil {
				t.Fatal(err)
			}
			want := allTails
			if kind == "btrfs" {
				want = smallTails
			}
			if c.tailKind() != want {
				t.Errorf("tails on %s: %v, want %v", kind, c.tailKind(), want)
			}
			checkTailFiles(t, c, p, want)
			if ents, err := os.ReadDir(filepath.Join(c.dir, "tmp")); err != nil || len(ents) != 0 {
				t.Errorf("tmp/ after the fetch: %d files (%v), want none", len(ents), err)
			}
			if _, err := c.Trim(Limits{}, func(Entry) bool { return false }); err != nil {
				t.Fatal(err)
			}
			checkEmpty(t, c)
		})
	}
}

// TestNoTails: a cache whose filesystem clones nothing keeps no tails.
func TestNoTails(t *testing.T) {
	c := openCache(t)
	dir, p := localRepo(t)
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.tailsDir(p.SHA256)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tails of an entry on %s: %v, want none", c.dir, err)
	}
}

// TestTailsAfterCrash: an entry written unsynced in an earlier boot whose tail file lost
// its data is removed at its first use, as one whose tar did, and fetched again whole; one
// whose tails are intact is kept.
func TestTailsAfterCrash(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	base := testfs.Mount(t, "xfs")
	for _, damage := range []bool{false, true} {
		c, err := OpenCache(t.Context(), filepath.Join(base, "cache"))
		if err != nil {
			t.Fatal(err)
		}
		dir, ps := sharedRepo(t, [][]file{tailFiles()})
		p := ps[0]
		if err := fetchOne(c, quick(t, dir), p); err != nil {
			t.Fatal(err)
		}
		crashed(t, c, p, damage)
		c.Close()
		c, err = OpenCache(t.Context(), filepath.Join(base, "cache"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Members(p.SHA256)
		if damage != errors.Is(err, ErrDamaged) {
			t.Errorf("damaged %v: Members: %v", damage, err)
		}
		if !damage { // checked whole, and settled by the next Settle
			if err := c.Settle(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(c.idxPath(p.SHA256))
			if err != nil {
				t.Fatal(err)
			}
			if h, _, err := readEntryHeader(data); err != nil || h.boot != "" {
				t.Errorf("the intact entry after its first use: marked with boot %q (%v), want none", h.boot, err)
			}
			checkTailFiles(t, c, p, allTails)
		}
		if err := fetchOne(c, quick(t, dir), p); err != nil {
			t.Fatal(err)
		}
		checkTailFiles(t, c, p, allTails)
		_, err = c.Trim(Limits{}, func(Entry) bool { return false })
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteTailFiles writes a file for each member with a tail, holding the tar's bytes,
// and returns the error of one it cannot create.
func TestWriteTailFiles(t *testing.T) {
	dir := t.TempDir()
	data := randomData(23, 200*tarutil.Alignment)
	tarPath := filepath.Join(dir, "x.tar")
	if err := os.WriteFile(tarPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tar, err := os.Open(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	defer tar.Close()
	var ms []tarutil.Member
	for i := range int64(20) {
		ms = append(ms, tarutil.Member{Name: "f", Type: '0', Offset: 10 * i * tarutil.Alignment, Size: 1 + i*tarutil.Alignment/2})
	}
	for _, exists := range []bool{false, true} {
		tails := t.TempDir()
		if exists {
			off, _ := ms[7].Tail()
			if err := os.WriteFile(filepath.Join(tails, tailName(off)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := os.Open(tails)
		if err != nil {
			t.Fatal(err)
		}
		err = writeTailFiles(d, tar, ms, false)
		d.Close()
		if exists {
			if !errors.Is(err, fs.ErrExist) {
				t.Errorf("with a tail file there already: %v, want fs.ErrExist", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			off, n := m.Tail()
			got, err := os.ReadFile(filepath.Join(tails, tailName(off)))
			if err != nil || !bytes.Equal(got, data[off:off+n]) {
				t.Errorf("tail at %d: %d bytes (%v), want %d", off, len(got), err, n)
			}
		}
	}
}

// TestCheckTailsQuotesNames: a member's name, the archive's words, is quoted in the error
// of a tail file that cannot be opened (a symlink in its place) or differs from the tar.
func TestCheckTailsQuotesNames(t *testing.T) {
	c, err := OpenCache(t.Context(), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sha := strings.Repeat("a", 64)
	if err := os.Mkdir(c.tailsDir(sha), 0o755); err != nil {
		t.Fatal(err)
	}
	tar, err := os.CreateTemp(t.TempDir(), "tar")
	if err != nil {
		t.Fatal(err)
	}
	defer tar.Close()
	if _, err := tar.Write(randomData(23, 3*512)); err != nil {
		t.Fatal(err)
	}
	ms := []tarutil.Member{{Name: "share/\x1b[2Jsymlink", Type: '0', Offset: 512, Size: 10}}
	if err := os.Symlink("elsewhere", filepath.Join(c.tailsDir(sha), tailName(512))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.tailsDir(sha), tailName(1024)), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []tarutil.Member{ms[0], {Name: "share/\x1b[2Jdiffers", Type: '0', Offset: 1024, Size: 5}} {
		err := c.checkTails(sha, tar, []tarutil.Member{m}, true)
		if err == nil || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("tail of %q: %v, want an error with the name quoted", m.Name, err)
		}
	}
}

// TestSettleTails: Settle of entries with tails on XFS (one syncfs writes back their tails,
// new indexes and tars) drops every mark, keeps each entry whole with its tails, and leaves
// nothing in tmp/.
func TestSettleTails(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	c := shareCache(t, "xfs")
	dir, ps := sharedRepo(t, [][]file{tailFiles(), {{"share/other", randomData(26, 2*tarutil.Alignment+9)}}})
	var shas []string
	for _, p := range ps {
		if err := fetchOne(c, quick(t, dir), p); err != nil {
			t.Fatal(err)
		}
		shas = append(shas, p.SHA256)
	}
	if err := c.Settle(shas...); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		data, err := os.ReadFile(c.idxPath(p.SHA256))
		if err != nil {
			t.Fatal(err)
		}
		if h, _, err := readEntryHeader(data); err != nil || h.boot != "" {
			t.Errorf("%s after Settle: marked with boot %q (%v), want none", p.Name, h.boot, err)
		}
	}
	for _, p := range ps {
		checkTailFiles(t, c, p, allTails)
	}
	if ents, err := os.ReadDir(filepath.Join(c.dir, "tmp")); err != nil || len(ents) != 0 {
		t.Errorf("tmp/ after Settle: %d files (%v), want none", len(ents), err)
	}
}

// TestSmallTailsFiles: on btrfs, the tails of members under a block are kept for an entry
// of at most smallTailsFiles files with data, empty ones not counted, and for none of one
// more, which keeps those over tarutil.MaxInline alone; an entry that keeps no tail has no
// tails directory.
func TestSmallTailsFiles(t *testing.T) {
	for _, tc := range []struct {
		n    int  // files of a byte
		long bool // and one more with a tail over MaxInline
	}{{smallTailsFiles, false}, {smallTailsFiles + 1, false}, {smallTailsFiles, true}} {
		c := smallTailsCache(t)
		files := []file{{"empty", nil}}
		for i := range tc.n {
			files = append(files, file{fmt.Sprintf("f/%d", i), []byte{byte(i)}})
		}
		if tc.long {
			files = append(files, file{"long", randomData(24, tarutil.Alignment+tarutil.MaxInline+1)})
		}
		dir, ps := sharedRepo(t, [][]file{files})
		if err := fetchOne(c, quick(t, dir), ps[0]); err != nil {
			t.Fatal(err)
		}
		few := len(files)-1 <= smallTailsFiles
		if got, want := c.hasTails(ps[0].SHA256), few || tc.long; got != want {
			t.Errorf("%d files with data: tails kept %v, want %v", len(files)-1, got, want)
		}
		if few || tc.long {
			checkTailFiles(t, c, ps[0], smallTails)
		}
		if ents, err := os.ReadDir(c.tailsDir(ps[0].SHA256)); !few && tc.long && (err != nil || len(ents) != 1) {
			t.Errorf("%d files with data: %d tail files (%v), want the long one's alone", len(files)-1, len(ents), err)
		}
	}
}

// TestTailsAfterCrashMoved: at an entry's first use after a crash, its tail files are
// compared with its tar whatever kind of tails the cache's filesystem takes now (a cache
// copied from btrfs, where only small members' tails are kept): a member without one is
// installed from the tar and is no damage; a tail that lost its data is.
func TestTailsAfterCrashMoved(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	for _, damage := range []bool{false, true} {
		c := smallTailsCache(t)
		dir, ps := sharedRepo(t, [][]file{tailFiles()})
		p := ps[0]
		if err := fetchOne(c, quick(t, dir), p); err != nil {
			t.Fatal(err)
		}
		crashed(t, c, p, damage)
		c.Close()
		c, err := OpenCache(t.Context(), c.dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Members(p.SHA256)
		c.Close()
		if damage != errors.Is(err, ErrDamaged) {
			t.Errorf("damaged %v: Members: %v", damage, err)
		}
	}
}

// crashed marks p's entry as written unsynced in an earlier boot and, if damage, empties
// one of its tail files, as a crash before its write-back would have.
func crashed(t *testing.T, c *Cache, p repo.Package, damage bool) {
	t.Helper()
	idx, err := os.ReadFile(c.idxPath(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	line, rest, _ := strings.Cut(string(idx), "\n")
	idx = []byte(strings.Join(strings.Fields(line)[:5], " ") + " 00000000-0000-0000-0000-000000000000\n" + rest)
	if err := os.WriteFile(c.idxPath(p.SHA256), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(c.tailsDir(p.SHA256))
	if err != nil || len(ents) == 0 {
		t.Fatalf("tails: %d files (%v)", len(ents), err)
	}
	if damage {
		if err := os.Truncate(filepath.Join(c.tailsDir(p.SHA256), ents[0].Name()), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTailsAfterCrashFIFO: at an entry's first use after a crash, a FIFO in a tail file's
// place, which another user of the cache holds open for writing, is damage, found without
// waiting for the FIFO.
func TestTailsAfterCrashFIFO(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	c := smallTailsCache(t)
	dir, ps := sharedRepo(t, [][]file{tailFiles()})
	p := ps[0]
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	crashed(t, c, p, false)
	ents, err := os.ReadDir(c.tailsDir(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	tail := filepath.Join(c.tailsDir(p.SHA256), ents[0].Name())
	if err := os.Remove(tail); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(tail, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(tail, os.O_RDWR, 0) // a writer, so that a read waits for data
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c.Close()
	c, err = OpenCache(t.Context(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		_, err := c.Members(p.SHA256)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrDamaged) {
			t.Errorf("Members: %v, want ErrDamaged", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Members with a FIFO as a tail file: still blocked after 30 s")
	}
}

// TestSettleAfterCrash: the entries a command finds written before a crash, each checked
// whole at its first use, are settled together: one syncfs for all of those with tails,
// not one each. The test counts syncfs calls in a child process under strace
// (PKG_TEST_SETTLE_CACHE), which uses the entries and settles them.
func TestSettleAfterCrash(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	if dir := os.Getenv("PKG_TEST_SETTLE_CACHE"); dir != "" {
		c, err := OpenCache(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		shas := strings.Fields(os.Getenv("PKG_TEST_SETTLE_SHAS"))
		for _, sha := range shas {
			if _, err := c.Members(sha); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Settle(shas...); err != nil {
			t.Fatal(err)
		}
		return
	}
	testfs.NeedTools(t, "strace")
	c := smallTailsCache(t)
	dir, ps := sharedRepo(t, [][]file{tailFiles(), {{"bin/other", []byte("#!/bin/sh\necho other\n")}, {"share/small", randomData(24, 100)}}})
	var shas []string
	for _, p := range ps {
		if err := fetchOne(c, quick(t, dir), p); err != nil {
			t.Fatal(err)
		}
		crashed(t, c, p, false)
		shas = append(shas, p.SHA256)
	}
	c.Close()
	out := filepath.Join(t.TempDir(), "strace")
	cmd := exec.Command("strace", "-f", "-qq", "-o", out, "-y", "-e", "trace=syncfs", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PKG_TEST_SETTLE_CACHE="+c.dir, "PKG_TEST_SETTLE_SHAS="+strings.Join(shas, " "))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if calls := testfs.SyncCalls(lines, c.dir); calls["syncfs"] != 1 {
		t.Errorf("syncfs calls settling %d entries after a crash: %d, want 1:\n%s", len(shas), calls["syncfs"], b)
	}
	for _, p := range ps {
		data, err := os.ReadFile(c.idxPath(p.SHA256))
		if err != nil {
			t.Fatal(err)
		}
		if h, _, err := readEntryHeader(data); err != nil || h.boot != "" {
			t.Errorf("%s %s after its use and Settle: marked with boot %q (%v), want none", p.Name, p.Version, h.boot, err)
		}
	}
}

// TestTailsSpotChecked: an entry's spot check, at its first use in a process that did not
// write it, compares tail files with the tar too, the first and the last of a sample of
// spotTails among more: one that differs is damage, the entry removed and fetched again
// whole.
func TestTailsSpotChecked(t *testing.T) {
	var files []file
	for i := range 3 * spotTails {
		files = append(files, file{fmt.Sprintf("f/%03d", i), randomData(uint64(30+i), 10+i)})
	}
	dir, ps := sharedRepo(t, [][]file{files})
	p := ps[0]
	c := smallTailsCache(t)
	for _, which := range []string{"first", "last"} {
		if err := fetchOne(c, quick(t, dir), p); err != nil {
			t.Fatal(err)
		}
		ms, err := c.Members(p.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		var offs []int64
		for _, m := range ms {
			if off, n := m.Tail(); n > 0 {
				offs = append(offs, off)
			}
		}
		off := offs[0]
		if which == "last" {
			off = offs[len(offs)-1]
		}
		tail := filepath.Join(c.tailsDir(p.SHA256), tailName(off))
		b, err := os.ReadFile(tail)
		if err != nil {
			t.Fatal(err)
		}
		b[0] ^= 1
		if err := os.WriteFile(tail, b, 0o644); err != nil {
			t.Fatal(err)
		}
		wantDamaged(t, c, dir, p, "the "+which+" tail changed")
	}
}

// TestTailSample: a spot check compares spotTails of an entry's tail files, or all of
// them where there are no more, the first and the last among them, each once; a check
// after a crash compares all of them.
func TestTailSample(t *testing.T) {
	for _, n := range []int{0, 1, spotTails - 1, spotTails, spotTails + 1, 2*spotTails + 1, 7010} {
		for _, all := range []bool{false, true} {
			got := slices.Collect(tailSample(n, all))
			want := n
			if !all {
				want = min(n, spotTails)
			}
			once := len(slices.Compact(slices.Clone(got))) == len(got)
			if len(got) != want || !slices.IsSorted(got) || !once || n > 0 && (got[0] != 0 || got[len(got)-1] != n-1) {
				t.Errorf("tailSample(%d, %v) = %v, want %d of them, first and last included, each once", n, all, got, want)
			}
		}
	}
}

// TestTailKeeps: which members' tails an entry keeps, written out, as checkTailFiles
// takes them from keeps itself: on XFS every tail; on btrfs those over
// tarutil.MaxInline, and in an entry of few files those of members under a block.
func TestTailKeeps(t *testing.T) {
	const a, inline = tarutil.Alignment, tarutil.MaxInline
	for _, tc := range []struct {
		kind  tailKind
		small bool
		size  int64
		want  bool
	}{
		{noTails, true, 100, false},
		{allTails, false, 0, false},
		{allTails, false, 100, true},
		{allTails, false, a, false},
		{allTails, false, a + 1, true},
		{smallTails, true, 0, false},
		{smallTails, true, 100, true},
		{smallTails, true, inline + 1, true},
		{smallTails, true, a, false},
		{smallTails, true, a + inline, false},
		{smallTails, true, a + inline + 1, true},
		{smallTails, false, 100, false},
		{smallTails, false, inline, false},
		{smallTails, false, inline + 1, true},
		{smallTails, false, a + inline, false},
		{smallTails, false, a + inline + 1, true},
	} {
		m := tarutil.Member{Name: "f", Type: tar.TypeReg, Offset: 3 * a, Size: tc.size}
		if got := tc.kind.keeps(&m, tc.small); got != tc.want {
			t.Errorf("kind %d, few files %v, a member of %d bytes: kept %v, want %v", tc.kind, tc.small, tc.size, got, tc.want)
		}
	}
}

// smallTailsCache opens a new cache that keeps tails as one on btrfs does (smallTails),
// whatever the filesystem under the test.
func smallTailsCache(t testing.TB) *Cache {
	t.Helper()
	c := openCache(t)
	c.tailsOnce.Do(func() { c.tails = smallTails })
	return c
}

// TestTailsNotFiles: at an entry's spot check, anything but a directory where its tails
// are, or anything but a regular file where a tail file is, is damage, whatever it holds
// (a symlink to a good copy included): the entry is removed, that thing with it, and
// fetched again whole.
func TestTailsNotFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, tails, first string)
	}{
		{"tails a file", func(t *testing.T, tails, _ string) {
			replace(t, tails, func(p string) error { return os.WriteFile(p, nil, 0o644) })
		}},
		{"tails a symlink", func(t *testing.T, tails, _ string) { symlinkAway(t, tails) }},
		{"tail a directory", func(t *testing.T, _, first string) {
			replace(t, first, func(p string) error { return os.Mkdir(p, 0o755) })
		}},
		{"tail a symlink", func(t *testing.T, _, first string) { symlinkAway(t, first) }},
		{"tail a socket", func(t *testing.T, _, first string) {
			replace(t, first, func(p string) error { return unix.Mknod(p, unix.S_IFSOCK|0o644, 0) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := smallTailsCache(t)
			dir, ps := sharedRepo(t, [][]file{tailFiles()})
			p := ps[0]
			if err := fetchOne(c, quick(t, dir), p); err != nil {
				t.Fatal(err)
			}
			ms, err := c.Members(p.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			first := int64(-1) // the first member's tail file, which every spot check compares
			for _, m := range ms {
				if off, n := m.Tail(); n > 0 && existsAt(c.tars, filepath.Join(tailsName(p.SHA256), tailName(off))) {
					first = off
					break
				}
			}
			if first < 0 {
				t.Fatal("no tail file")
			}
			tc.put(t, c.tailsDir(p.SHA256), filepath.Join(c.tailsDir(p.SHA256), tailName(first)))
			wantDamaged(t, c, dir, p, tc.name)
		})
	}
}

// wantDamaged: the entry p, which what has damaged, is found damaged at its first use by
// another Cache and removed; fetched again from the repository dir, it is whole.
func wantDamaged(t *testing.T, c *Cache, dir string, p repo.Package, what string) {
	t.Helper()
	other, err := OpenCache(t.Context(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Members(p.SHA256)
	other.Close()
	if !errors.Is(err, ErrDamaged) || c.Has(p.SHA256) {
		t.Errorf("%s: Members: %v, entry kept %v; want ErrDamaged and the entry removed", what, err, c.Has(p.SHA256))
	}
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	checkTailFiles(t, c, p, smallTails)
}

// replace removes the file path and makes another in its place with put.
func replace(t *testing.T, path string, put func(string) error) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := put(path); err != nil {
		t.Fatal(err)
	}
}

// symlinkAway moves the file at path to a directory of the test's and puts in its place a
// symlink to it: a good copy, reached through a symlink.
func symlinkAway(t *testing.T, path string) {
	t.Helper()
	good := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.Rename(path, good); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, path); err != nil {
		t.Fatal(err)
	}
}

// TestTailsNotDirNoEntry: a file or a symlink to a directory in the place of the tails of
// an entry the cache does not hold, as another user of a shared cache may make, is no
// entry's: a Fetch replaces it with the entry's tails, where their rename failed (ENOTDIR)
// and the entry went without them; what the symlink points to stays.
func TestTailsNotDirNoEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(path, away string) error
	}{
		{"file", func(path, _ string) error { return os.WriteFile(path, nil, 0o644) }},
		{"symlink", func(path, away string) error { return os.Symlink(away, path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := smallTailsCache(t)
			dir, ps := sharedRepo(t, [][]file{tailFiles()})
			p := ps[0]
			away := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(away, []byte("the user's"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.put(c.tailsDir(p.SHA256), filepath.Dir(away)); err != nil {
				t.Fatal(err)
			}
			if err := fetchOne(c, quick(t, dir), p); err != nil {
				t.Fatal(err)
			}
			checkTailFiles(t, c, p, smallTails)
			if b, err := os.ReadFile(away); err != nil || string(b) != "the user's" {
				t.Errorf("the file where the symlink points: %q, %v", b, err)
			}
		})
	}
}
