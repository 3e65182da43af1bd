package fetch

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/regfile"
	"pkg/repo"
	"pkg/tarutil"
)

// TestDamagedEntry damages a cached tar and checks that Members reports it and removes the
// entry, that Fetch then downloads it again, and that offline Fetch says what happened.
func TestDamagedEntry(t *testing.T) {
	dir, p := localRepo(t)
	online, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	offline, err := NewSource(dir, Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	open := cacheOpener(t) // a new Cache, as a new process would open it, checks again
	c := open()
	if err := fetchOne(c, online, p); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var first int64 = -1 // the data of the first file, which the spot check always hashes
	for _, m := range ms {
		if m.Type == tar.TypeReg && m.Size > 0 {
			first = m.Offset
			break
		}
	}
	damage := func() {
		bad := append([]byte(nil), good...)
		bad[first] ^= 1
		if err := os.WriteFile(c.Path(p.SHA256), bad, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	damage()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Errorf("Members of an entry this Cache checked before: %v; want it checked once", err)
	}
	c = open()
	// Unchecked, Members reads the damaged entry's members as its index lists them and
	// leaves it in place.
	c.Unchecked = true
	if got, err := c.Members(p.SHA256); err != nil || !reflect.DeepEqual(got, ms) || !c.Has(p.SHA256) {
		t.Errorf("unchecked Members of a damaged entry: %d members, %v, entry kept %v; want its %d members, kept", len(got), err, c.Has(p.SHA256), len(ms))
	}
	c.Unchecked = false
	// The error names the entry and says what is wrong once, without a Go package's name.
	if _, err := c.Members(p.SHA256); !errors.Is(err, ErrDamaged) || !strings.HasPrefix(err.Error(), "cached "+p.Name+" "+p.Version+" is damaged (") || strings.Contains(err.Error(), "fetch:") || strings.Contains(err.Error(), "tarutil:") {
		t.Fatalf("Members of a damaged entry: %v, want ErrDamaged naming %s %s", err, p.Name, p.Version)
	}
	if c.Has(p.SHA256) {
		t.Error("damaged entry still in the cache")
	}
	if err := fetchOne(c, online, p); err != nil {
		t.Fatalf("Fetch after damage: %v", err)
	}
	checkEntry(t, c, p, testFiles())

	damage()
	c = open()
	err = fetchOne(c, offline, p)
	if !errors.Is(err, ErrDamaged) || !errors.Is(err, ErrOffline) || strings.Contains(err.Error(), "fetch:") {
		t.Errorf("offline Fetch of a damaged entry: %v, want ErrDamaged and ErrOffline, without a Go package's name", err)
	}
	checkEmpty(t, c)
}

// TestUnsyncedEntry checks that a fetched entry names the boot it was written in, that
// Settle drops the mark, and that an entry still marked with another boot, as after a crash,
// has all of its data checked at its first use: damage that the spot check does not reach
// removes it, an intact one is settled.
func TestUnsyncedEntry(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	dir, p := localRepo(t)
	src, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	open := cacheOpener(t)
	boot := func(c *Cache) string {
		data, err := os.ReadFile(c.idxPath(p.SHA256))
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := readEntryHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		return h.boot
	}
	// markOther makes the entry look written unsynced before a reboot.
	markOther := func(c *Cache) {
		data, err := os.ReadFile(c.idxPath(p.SHA256))
		if err != nil {
			t.Fatal(err)
		}
		line, rest, _ := strings.Cut(string(data), "\n")
		line = strings.Join(strings.Fields(line)[:5], " ") + " 00000000-0000-0000-0000-000000000000\n"
		if err := os.WriteFile(c.idxPath(p.SHA256), []byte(line+rest), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c := open()
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
	if got := boot(c); got != bootID() {
		t.Fatalf("fetched entry marked with boot %q, want this boot %q", got, bootID())
	}
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(p.SHA256); err != nil {
		t.Fatal(err)
	}
	if got := boot(c); got != "" {
		t.Fatalf("settled entry still marked with boot %q", got)
	}
	checkEntry(t, c, p, testFiles())

	// Replaced by another process between Members and Settle: the new entry keeps its mark.
	if err := os.Remove(c.Path(p.SHA256)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(c.idxPath(p.SHA256)); err != nil {
		t.Fatal(err)
	}
	c = open()
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatal(err)
	}
	other := open()
	if err := os.Remove(c.Path(p.SHA256)); err != nil {
		t.Fatal(err)
	}
	if err := fetchOne(other, src, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(p.SHA256); err != nil {
		t.Errorf("Settle of an entry replaced meanwhile: %v", err)
	}
	if got := boot(c); got != bootID() {
		t.Fatalf("entry fetched again while another process settled it: marked %q, want %q", got, bootID())
	}
	c = open()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(p.SHA256); err != nil || boot(c) != "" {
		t.Fatalf("Settle: %v, boot %q", err, boot(c))
	}

	// Intact, from another boot: checked, and settled by the Close that ends its use.
	markOther(c)
	c = open()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatalf("Members of an intact entry from another boot: %v", err)
	}
	c.Close()
	if got := boot(c); got != "" {
		t.Errorf("entry checked after a reboot still marked with boot %q", got)
	}
	c = open()

	// Damaged past what a spot check hashes: only the full check sees it.
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var big tarutil.Member
	for _, m := range ms {
		if m.Name == "share/big" {
			big = m
		}
	}
	if big.Size <= spotBudget {
		t.Fatalf("share/big has %d bytes, want more than the spot check's %d", big.Size, spotBudget)
	}
	f, err := os.OpenFile(c.Path(p.SHA256), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, big.Offset+big.Size/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := open().Members(p.SHA256); err != nil {
		t.Fatalf("spot check of a settled entry: %v; the damage should be out of its reach", err)
	}
	markOther(c)
	c = open()
	var me *tarutil.MemberError
	if _, err := c.Members(p.SHA256); !errors.Is(err, ErrDamaged) || !errors.As(err, &me) || me.Name != "share/big" {
		t.Fatalf("Members of a damaged entry from another boot: %v, want ErrDamaged naming share/big", err)
	}
	checkEmpty(t, c)
}

// TestSpotSample checks that the first use of an entry with more than spotBudget bytes of
// data hashes a sample of spotSample bytes, not spotBudget: it counts what the process
// reads (rchar in /proc/self/io), which for the 48 files of 32 KiB here was over 1 MiB.
func TestSpotSample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	sha := sampleEntry(t, dir)
	c, err := OpenCache(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	idx, err := os.Stat(c.idxPath(sha))
	if err != nil {
		t.Fatal(err)
	}
	before := readChars(t)
	if _, err := c.Members(sha); err != nil {
		t.Fatal(err)
	}
	// The index is read twice (its checksum, then its members), 64 headers of 512 bytes.
	read, most := readChars(t)-before, 2*idx.Size()+64*512+spotSample+32<<10
	if read > most {
		t.Errorf("Members read %d bytes, want at most %d", read, most)
	}
}

// BenchmarkMembers reads and checks the members of an entry of 48 files of 32 KiB, as a
// process's first use does.
func BenchmarkMembers(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "cache")
	sha := sampleEntry(b, dir)
	b.ReportAllocs()
	for b.Loop() {
		c, err := OpenCache(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Members(sha); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkMembersLogged looks up the members of an entry of 48 files of 32 KiB that this
// boot's check log records as checked, as a process's first use does in a warm install:
// the index is read, the tar only looked at.
func BenchmarkMembersLogged(b *testing.B) {
	if checkLogName() == "" {
		b.Skip("no boot id: no check log")
	}
	dir := filepath.Join(b.TempDir(), "cache")
	sha := sampleEntry(b, dir)
	later := checkNow
	checkNow = func() time.Time { return later().Add(time.Hour) }
	b.Cleanup(func() { checkNow = later })
	c, err := OpenCache(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Members(sha); err != nil {
		b.Fatal(err)
	}
	if err := c.Settle(); err != nil {
		b.Fatal(err)
	}
	if c, err = OpenCache(context.Background(), dir); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		c.checked.Delete(sha) // this process's first use again
		if _, err := c.Members(sha); err != nil {
			b.Fatal(err)
		}
	}
}

// sampleEntry fetches a package of 48 files of 32 KiB (1.5 MiB) into the cache at dir,
// settled, and returns its sha256.
func sampleEntry(t testing.TB, dir string) string {
	rng := rand.New(rand.NewPCG(3, 4))
	var files []file
	for i := range 48 {
		data := make([]byte, 32<<10)
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		files = append(files, file{fmt.Sprintf("share/f%02d", i), data})
	}
	archive := gzipped(t, makeTar(t, files))
	p := entry("sample", archive, files)
	repoDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(repoDir, p.Archive), archive, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(repoDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenCache(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(p.SHA256); err != nil { // else an entry of another boot is hashed whole
		t.Fatal(err)
	}
	return p.SHA256
}

// readChars returns the bytes this process has read (rchar in /proc/self/io).
func readChars(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no read count: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// TestEntryNotRegular puts a symlink to a copy of an entry's tar, a FIFO and a directory in
// the place of the tar, as another user of a shared cache may: the next use finds the entry damaged
// and removes the name (never what a symlink points to), and Fetch downloads it again.
func TestEntryNotRegular(t *testing.T) {
	dir, p := localRepo(t)
	src := quick(t, dir)
	for _, nf := range notFiles {
		t.Run(nf.name, func(t *testing.T) {
			open := cacheOpener(t)
			c := open()
			path, decoy, good := replaceTar(t, c, src, p, nf.put)
			c.Close()
			c = open()
			wantNotRegular(t, c, src, p, "a "+nf.name+" for its tar")
			if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
				t.Errorf("the tar fetched again: %v, %v; want a regular file", info, err)
			}
			if b, err := os.ReadFile(decoy); err != nil || string(b) != string(good) {
				t.Errorf("the symlink's target changed: %v", err)
			}
		})
	}
}

// notFiles are what another user of a shared cache may put in the place of an entry's
// file, given its path and a copy of it at decoy: a symlink to the copy, a FIFO, a
// directory.
var notFiles = []struct {
	name string
	put  func(path, decoy string) error
}{
	{"symlink", func(path, decoy string) error { return os.Symlink(decoy, path) }},
	{"fifo", func(path, _ string) error { return unix.Mkfifo(path, 0o644) }},
	{"directory", func(path, _ string) error { return os.Mkdir(path, 0o755) }},
}

// replaceTar fetches p from src into c and puts, with put, something else in the place of
// its tar, a copy of the tar at decoy: it returns the tar's path, decoy and the tar's bytes.
func replaceTar(t *testing.T, c *Cache, src *Source, p repo.Package, put func(path, decoy string) error) (path, decoy string, good []byte) {
	t.Helper()
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(c.dir, "tars", tarName(p.SHA256))
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoy = filepath.Join(t.TempDir(), "decoy.tar")
	if err := errors.Join(os.WriteFile(decoy, good, 0o644), os.Remove(path), put(path, decoy)); err != nil {
		t.Fatal(err)
	}
	return path, decoy, good
}

// TestIndexNotRegular puts a symlink to a copy of an entry's index, a directory, and a FIFO
// with and without a writer holding it open, in the place of the index: List reports the
// entry's index as not a regular file without reading it (a read of the held FIFO blocked
// every List, pkg cache clean's too), and the next use finds the entry damaged and removes
// it, where it kept it and Fetch, finding it cached, never downloaded it again.
func TestIndexNotRegular(t *testing.T) {
	dir, p := localRepo(t)
	src := quick(t, dir)
	for _, tt := range []struct {
		name string
		put  func(t *testing.T, path string)
	}{
		{"symlink", symlinkAway},
		{"directory", func(t *testing.T, path string) {
			replace(t, path, func(path string) error { return os.Mkdir(path, 0o755) })
		}},
		{"fifo", func(t *testing.T, path string) {
			replace(t, path, func(path string) error { return unix.Mkfifo(path, 0o644) })
		}},
		{"fifo held open for writing", func(t *testing.T, path string) {
			replace(t, path, func(path string) error { return unix.Mkfifo(path, 0o644) })
			w, err := os.OpenFile(path, os.O_RDWR, 0) // a writer, so that a read waits for data
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			open := cacheOpener(t)
			c := open()
			if err := fetchOne(c, src, p); err != nil {
				t.Fatal(err)
			}
			tt.put(t, c.idxPath(p.SHA256))
			c.Close()
			c = open()
			listed := make(chan error, 1)
			go func() {
				es, err := c.List()
				if err == nil && (len(es) != 1 || es[0].SHA256 != p.SHA256) {
					err = fmt.Errorf("entries %v, want %s alone", es, p.SHA256)
				} else if err == nil {
					err = es[0].Err
				}
				listed <- err
			}()
			var nr *regfile.NotRegularError
			select {
			case err := <-listed:
				if !errors.As(err, &nr) {
					t.Errorf("List with a %s for the index: %v, want the entry's *regfile.NotRegularError", tt.name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("List with a %s for the index: still blocked after 30 s", tt.name)
			}
			wantNotRegular(t, c, src, p, "a "+tt.name+" for its index")
			c.Close()
			if _, err := open().Members(p.SHA256); err != nil {
				t.Errorf("Members of the entry fetched again: %v", err)
			}
		})
	}
}

// wantNotRegular: Members of the entry p, with what in the place of its tar or index, finds
// it damaged, a *regfile.NotRegularError, and removes it; src fetches it again.
func wantNotRegular(t *testing.T, c *Cache, src *Source, p repo.Package, what string) {
	t.Helper()
	var nr *regfile.NotRegularError
	if _, err := c.Members(p.SHA256); !errors.Is(err, ErrDamaged) || !errors.As(err, &nr) {
		t.Errorf("Members with %s: %v, want ErrDamaged for a *regfile.NotRegularError", what, err)
	}
	if c.Has(p.SHA256) {
		t.Errorf("the entry with %s is still in the cache", what)
	}
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
}

// TestDamageErrors: what shows an entry's bytes wrong is damage, each errno deliberately;
// running out of descriptors or memory, a signal or a permission is not.
func TestDamageErrors(t *testing.T) {
	path := func(errno unix.Errno) error {
		return fmt.Errorf("tail of member %q: %w", "f", &os.PathError{Op: "open", Path: "tars/x.tails/512", Err: errno})
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("tail of member %q: tars/x.tails/512 %w", "f", errTailDiffers), true},
		{&tarutil.MemberError{Name: "f", Err: tarutil.ErrDamaged}, true},
		{fmt.Errorf("%w: checksum mismatch", tarutil.ErrIndex), true},
		{errNotEntryIndex, true},
		{&os.PathError{Op: "open", Path: "x.tar", Err: &regfile.NotRegularError{Type: fs.ModeSymlink}}, true},
		{fmt.Errorf("tarutil: read member f: %w", io.ErrUnexpectedEOF), true},
		{path(unix.ELOOP), true},
		{path(unix.ENOTDIR), true},
		{path(unix.EISDIR), true},
		{path(unix.ENXIO), true},
		{path(unix.EAGAIN), true},
		{path(unix.EIO), true},
		{path(unix.EUCLEAN), true},
		{path(unix.EBADMSG), true},
		{path(unix.EMFILE), false},
		{path(unix.ENFILE), false},
		{path(unix.ENOMEM), false},
		{path(unix.EINTR), false},
		{path(unix.EACCES), false},
		{path(unix.EPERM), false},
		{errors.New("other"), false},
	} {
		if got := Damaged(tc.err); got != tc.want {
			t.Errorf("Damaged(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCheckOutOfDescriptors: a spot check that runs out of descriptors, wherever it does,
// returns an error naming the entry's file, not ErrDamaged, keeps the entry and does not
// record it as checked; with descriptors enough it passes. A child process
// (PKG_TEST_NOFILE_CACHE) lowers its RLIMIT_NOFILE one descriptor at a time.
func TestCheckOutOfDescriptors(t *testing.T) {
	if dir := os.Getenv("PKG_TEST_NOFILE_CACHE"); dir != "" {
		checkOutOfDescriptors(t, dir, os.Getenv("PKG_TEST_NOFILE_SHA"))
		return
	}
	c := smallTailsCache(t)
	dir, ps := sharedRepo(t, [][]file{tailFiles()})
	p := ps[0]
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PKG_TEST_NOFILE_CACHE="+c.dir, "PKG_TEST_NOFILE_SHA="+p.SHA256)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	checkTailFiles(t, c, p, smallTails)
}

// checkOutOfDescriptors is TestCheckOutOfDescriptors's child: it uses the entry with this
// sha256 in the cache dir under a descriptor limit raised by one after each failure.
func checkOutOfDescriptors(t *testing.T, dir, sha string) {
	c, err := OpenCache(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	tails := filepath.Join(dir, "tars", tailsName(sha))
	inTails := false
	for n := uint64(0); ; n++ {
		if n == 1024 {
			t.Fatalf("Members under a limit of %d descriptors: %v", n, err)
		}
		short := unix.Rlimit{Cur: n, Max: lim.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &short); err != nil {
			t.Fatal(err)
		}
		_, err = c.Members(sha)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		if err == nil {
			break
		}
		var pe *os.PathError
		if errors.Is(err, ErrDamaged) || !errors.Is(err, unix.EMFILE) || !errors.As(err, &pe) || !strings.Contains(pe.Path, sha) {
			t.Fatalf("Members under a limit of %d descriptors: %v; want EMFILE naming a file of entry %s, not ErrDamaged", n, err, sha)
		}
		if !c.Has(sha) {
			t.Fatalf("Members under a limit of %d descriptors removed the entry: %v", n, err)
		}
		if _, ok := c.checked.Load(sha); ok {
			t.Fatalf("Members under a limit of %d descriptors recorded the entry as checked: %v", n, err)
		}
		inTails = inTails || strings.HasPrefix(pe.Path, tails)
	}
	if !inTails {
		t.Errorf("no limit ran the tails check out of descriptors: the test shows nothing of it")
	}
}

// TestEntryNameEscaped: the name and version a damaged entry's error gives come from its
// index file, which another user of a shared cache may have written: their control
// characters are escaped.
func TestEntryNameEscaped(t *testing.T) {
	dir, p := localRepo(t)
	open := cacheOpener(t)
	c := open()
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.idxPath(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	h, rest, err := readEntryHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	h.name, h.version = "\x1b[2Jname", "1\x1b]0;x\a"
	data = append([]byte(h.line()), data[rest:]...)
	if err := os.WriteFile(c.idxPath(p.SHA256), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(c.dir, "tars", tarName(p.SHA256)), 512); err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err = open().Members(p.SHA256)
	if !errors.Is(err, ErrDamaged) || strings.ContainsAny(err.Error(), "\x1b\a") || !strings.Contains(err.Error(), `\u001b[2Jname`) {
		t.Errorf("Members of a damaged entry named with control characters: %v, want ErrDamaged naming it escaped", err)
	}
}

// TestIndexDirectoryNoTar: a directory in the place of the index of an entry the cache does
// not hold, as another user of a shared cache may make, is no entry's: a Fetch replaces it,
// where its rename failed on every Fetch (EISDIR).
func TestIndexDirectoryNoTar(t *testing.T) {
	dir, p := localRepo(t)
	c := openCache(t)
	if err := os.MkdirAll(filepath.Join(c.idxPath(p.SHA256), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatalf("Fetch with a directory for the index: %v", err)
	}
	if _, err := c.Members(p.SHA256); err != nil {
		t.Errorf("Members of the entry fetched: %v", err)
	}
}

// TestTrimNotRegular puts a symlink, a FIFO and a directory holding a file in the place of
// an entry's tar, and then of its index, and checks that a Trim without limits (pkg cache
// clean) lists the entry and removes whatever is there, through no symlink: a directory at
// the tar's place was not listed, and one at the index's outlived the clean, left in tars/
// for good.
func TestTrimNotRegular(t *testing.T) {
	dir, p := localRepo(t)
	src := quick(t, dir)
	for _, file := range []string{"tar", "index"} {
		for _, tt := range []struct {
			name string
			put  func(path, decoy string) error
		}{
			{"symlink", func(path, decoy string) error { return os.Symlink(decoy, path) }},
			{"fifo", func(path, _ string) error { return unix.Mkfifo(path, 0o644) }},
			{"directory", func(path, _ string) error {
				if err := os.Mkdir(path, 0o755); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(path, "f"), []byte("x"), 0o644)
			}},
		} {
			t.Run(file+"/"+tt.name, func(t *testing.T) {
				c := cacheOpener(t)()
				defer c.Close()
				if err := fetchOne(c, src, p); err != nil {
					t.Fatal(err)
				}
				name := tarName(p.SHA256)
				if file == "index" {
					name = idxName(p.SHA256)
				}
				path := filepath.Join(c.dir, "tars", name)
				decoy := filepath.Join(t.TempDir(), "decoy")
				if err := os.WriteFile(decoy, []byte("the user's"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := tt.put(path, decoy); err != nil {
					t.Fatal(err)
				}
				if file == "tar" { // listed as damaged, not as its index's package
					es, err := c.List()
					var nr *regfile.NotRegularError
					if err != nil || len(es) != 1 || !errors.As(es[0].Err, &nr) || es[0].Size != 0 {
						t.Errorf("List = %+v, %v; want the entry, Size 0, Err a *regfile.NotRegularError", es, err)
					}
				}
				tr, err := c.Trim(Limits{}, func(Entry) bool { return false })
				if err != nil {
					t.Fatalf("Trim: %v", err)
				}
				if len(tr.Removed) != 1 || tr.Removed[0].SHA256 != p.SHA256 {
					t.Errorf("Trim removed %v, want the entry %s", tr.Removed, p.SHA256)
				}
				left, err := os.ReadDir(filepath.Join(c.dir, "tars"))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range left {
					t.Errorf("left in tars/ after the clean: %s (%v)", e.Name(), e.Type())
				}
				if b, err := os.ReadFile(decoy); err != nil || string(b) != "the user's" {
					t.Errorf("the symlink's target: %q, %v", b, err)
				}
			})
		}
	}
}

// TestMembersWhole: damage to a large member's data, which the spot check of an entry's
// first use does not hash (share/big is past its budget), passes Members but not Members
// with Whole, which hashes all of it however recently the entry was checked, and removes
// the entry as damaged.
func TestMembersWhole(t *testing.T) {
	dir, p := localRepo(t)
	open := cacheOpener(t)
	c := open()
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	c = open()
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	c.Whole = true
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatalf("Members with Whole of a good entry: %v", err)
	}
	i := slices.IndexFunc(ms, func(m tarutil.Member) bool { return m.Name == "share/big" })
	if i < 0 {
		t.Fatal("no share/big in the entry")
	}
	f, err := os.OpenFile(c.Path(p.SHA256), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("damage"), ms[i].Offset+ms[i].Size/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c = open()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatalf("Members of an entry damaged past its sample: %v; want the damage unseen", err)
	}
	c.Whole = true
	if _, err := c.Members(p.SHA256); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "share/big") {
		t.Fatalf("Members with Whole of the damaged entry, checked before without: %v, want ErrDamaged naming share/big", err)
	}
	if c.Has(p.SHA256) {
		t.Error("damaged entry still in the cache")
	}
}

// TestLeftoverTar fetches an archive whose tar is in the cache without its index, as a
// partial restore of a cache leaves it: of other bytes (a member overwritten past the
// check's sample) and cut short. The fetch installs the tar it converted and verified, not
// the leftover, which it had kept with the new index over it: the bytes went unseen, or
// the next use found the entry damaged and removed it.
func TestLeftoverTar(t *testing.T) {
	dir, p := localRepo(t)
	good := openCache(t)
	if err := fetchOne(good, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(good.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := good.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m tarutil.Member) bool { return m.Name == "share/big" })
	if i < 0 {
		t.Fatal("no share/big in the entry")
	}
	overwritten := bytes.Clone(want)
	copy(overwritten[ms[i].Offset+ms[i].Size/2:], "XXXXXXXX")
	for _, tt := range []struct {
		name     string
		leftover []byte
	}{
		{"other bytes", overwritten},
		{"cut short", want[:ms[i].Offset+ms[i].Size/2]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := openCache(t)
			if err := os.WriteFile(c.Path(p.SHA256), tt.leftover, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := fetchOne(c, quick(t, dir), p); err != nil {
				t.Fatalf("Fetch over a leftover tar: %v", err)
			}
			c.Whole = true
			if _, err := c.Members(p.SHA256); err != nil {
				t.Fatalf("Members with Whole of the entry fetched: %v", err)
			}
			if got, err := os.ReadFile(c.Path(p.SHA256)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("tar in the cache: %d bytes (%v), want the %d converted, equal", len(got), err, len(want))
			}
		})
	}
}

// TestLinkTarCommitted commits a tar whose entry another process committed meanwhile: its
// tar is kept where it has the bytes converted here, and replaced where it has others.
func TestLinkTarCommitted(t *testing.T) {
	dir, p := localRepo(t)
	c := openCache(t)
	if err := fetchOne(c, quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Clone(data)
	other[len(other)/2] ^= 1
	for _, tt := range []struct {
		name string
		ours []byte
		keep bool
	}{
		{"same bytes", data, true},
		{"other bytes", other, false},
		{"shorter", data[:len(data)-512], false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.Stat(c.Path(p.SHA256))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c.dir, "tmp", "ours.tar"), tt.ours, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.linkTar("ours.tar", p.SHA256, false); err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(c.Path(p.SHA256))
			if err != nil {
				t.Fatal(err)
			}
			if got := os.SameFile(before, after); got != tt.keep {
				t.Errorf("tar kept: %v, want %v", got, tt.keep)
			}
			if got, err := os.ReadFile(c.Path(p.SHA256)); err != nil || !bytes.Equal(got, tt.ours) {
				t.Errorf("tar in the cache: %d bytes (%v), want the %d committed", len(got), err, len(tt.ours))
			}
			if _, err := os.Stat(filepath.Join(c.dir, "tmp", "ours.tar")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("temporary tar left: %v", err)
			}
		})
	}
}
