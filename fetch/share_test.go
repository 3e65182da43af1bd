package fetch

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/tarutil"
)

// randomData returns n bytes that no two seeds make alike.
func randomData(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// versions are three releases of one package: share/big and share/tools stay, share/table
// changes in place (same size), share/added comes in the second with a copy of itself.
func versions() [][]file {
	big, tools := randomData(1, 3<<20+123), randomData(2, 256<<10)
	return [][]file{
		{{"bin/tool", []byte("v1\n")}, {"share/big", big}, {"share/table", randomData(10, 64<<10)}, {"share/tools", tools}},
		{{"bin/tool", []byte("v2\n")}, {"share/added", randomData(3, 40<<10)}, {"share/added-copy", randomData(3, 40<<10)}, {"share/big", big}, {"share/table", randomData(11, 64<<10)}, {"share/tools", tools}},
		{{"bin/tool", []byte("v3\n")}, {"share/added", randomData(3, 40<<10)}, {"share/big", big}, {"share/table", randomData(12, 64<<10)}, {"share/tools", tools}},
	}
}

// sharedRepo writes the archives of releases into a repository directory and returns it
// with their index entries, versions 1.0, 2.0, ...
func sharedRepo(t *testing.T, releases [][]file) (string, []repo.Package) {
	dir := t.TempDir()
	var ps []repo.Package
	for i, files := range releases {
		archive := gzipped(t, makeTar(t, files))
		p := entry("demo", archive, files)
		p.Version = string(rune('1'+i)) + ".0"
		p.Archive = "demo-" + p.Version + ".tar.gz"
		if err := os.WriteFile(filepath.Join(dir, p.Archive), archive, 0o644); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return dir, ps
}

// member returns the member named name of the entry with this sha256.
func member(t *testing.T, c *Cache, sha, name string) tarutil.Member {
	t.Helper()
	ms, err := c.Members(sha)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("entry %s has no member %s", sha, name)
	return tarutil.Member{}
}

// sameBlocks returns how many of the whole blocks of member name's data lie on the same
// physical blocks in the tars of entries a and b.
func sameBlocks(t *testing.T, c *Cache, a, b, name string) (same, blocks int64) {
	t.Helper()
	return sameBlocksOf(t, c, a, name, b, name)
}

// sameBlocksOf is sameBlocks of member an of entry a and bn of b.
func sameBlocksOf(t *testing.T, c *Cache, a, an, b, bn string) (same, blocks int64) {
	t.Helper()
	ma, mb := member(t, c, a, an), member(t, c, b, bn)
	ea, err := testfs.Extents(c.Path(a), ma.Offset, ma.Size)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := testfs.Extents(c.Path(b), mb.Offset, mb.Size)
	if err != nil {
		t.Fatal(err)
	}
	for at := int64(0); at+tarutil.Alignment <= ma.Size; at += tarutil.Alignment {
		blocks++
		if pa := testfs.PhysicalAt(ea, ma.Offset+at); pa >= 0 && pa == testfs.PhysicalAt(eb, mb.Offset+at) {
			same++
		}
	}
	return same, blocks
}

// checkData fails unless the tar of p holds files, read from the disk.
func checkData(t *testing.T, c *Cache, p repo.Package, files []file) {
	t.Helper()
	f, err := os.Open(c.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s %s: %v", p.Name, p.Version, err)
		}
		if h.Typeflag == tar.TypeReg {
			got[h.Name], _ = io.ReadAll(tr)
		}
	}
	for _, fl := range files {
		if !bytes.Equal(got[fl.name], fl.data) {
			t.Errorf("%s %s: %s has %d bytes, sha256 %x; want %d bytes, %x", p.Name, p.Version, fl.name,
				len(got[fl.name]), sha256.Sum256(got[fl.name]), len(fl.data), sha256.Sum256(fl.data))
		}
	}
}

// usedBytes returns the disk space in use on the filesystem of dir, once synced.
func usedBytes(t *testing.T, dir string) int64 {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var st unix.Statfs_t
	if err := unix.Syncfs(fd); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstatfs(fd, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize)
}

// shareCache opens a cache on a fresh filesystem of kind.
func shareCache(t *testing.T, kind string) *Cache {
	c, err := OpenCache(context.Background(), filepath.Join(testfs.Mount(t, kind), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestShareVersions: a member an older version holds is shared with its tar, block for
// block but the last, partial one; a changed member is the new tar's own; every tar reads
// back as its archive; removing an older entry leaves the newer ones whole.
func TestShareVersions(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			c := shareCache(t, kind)
			releases := versions()
			dir, ps := sharedRepo(t, releases)
			s := quick(t, dir)
			for i, p := range ps {
				before := usedBytes(t, c.dir)
				if err := fetchOne(c, s, p); err != nil {
					t.Fatal(err)
				}
				grew := usedBytes(t, c.dir) - before
				info, err := os.Stat(c.Path(p.SHA256))
				if err != nil {
					t.Fatal(err)
				}
				if i > 0 && grew > info.Size()/4 {
					t.Errorf("fetch of %s took %d bytes of disk space for a tar of %d, most of which is shared", p.Version, grew, info.Size())
				}
			}
			for _, tc := range []struct {
				a, b   int
				name   string
				shared bool
			}{
				{0, 1, "share/big", true},
				{0, 2, "share/tools", true},
				{1, 2, "share/added", true},
				{0, 1, "share/table", false},
				{1, 2, "share/table", false},
			} {
				same, blocks := sameBlocks(t, c, ps[tc.a].SHA256, ps[tc.b].SHA256, tc.name)
				if want := map[bool]int64{true: blocks, false: 0}[tc.shared]; same != want {
					t.Errorf("%s of %s and %s: %d of %d whole blocks on the same disk blocks, want %d",
						tc.name, ps[tc.a].Version, ps[tc.b].Version, same, blocks, want)
				}
			}
			// Within a tar, but on btrfs, where it would keep the tar's first extent whole.
			same, blocks := sameBlocksOf(t, c, ps[1].SHA256, "share/added", ps[1].SHA256, "share/added-copy")
			if want := map[string]int64{"xfs": blocks}[kind]; same != want {
				t.Errorf("share/added and its copy in %s: %d of %d whole blocks on the same disk blocks, want %d", ps[1].Version, same, blocks, want)
			}
			if _, err := c.removeEntries(func(e Entry) bool { return e.SHA256 != ps[0].SHA256 && e.SHA256 != ps[1].SHA256 }); err != nil {
				t.Fatal(err)
			}
			c.checked.Clear()
			checkEntry(t, c, ps[2], releases[2])
			checkData(t, c, ps[2], releases[2])
		})
	}
}

// TestShareListedEntries: an entry in the cache before a Cache was opened lends its
// blocks as one the Cache committed itself does, found by its package's name in the
// listing the Cache takes once.
func TestShareListedEntries(t *testing.T) {
	c := shareCache(t, "xfs")
	releases := versions()
	dir, ps := sharedRepo(t, releases[:2])
	s := quick(t, dir)
	if err := fetchOne(c, s, ps[0]); err != nil {
		t.Fatal(err)
	}
	other, err := OpenCache(context.Background(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := fetchOne(other, s, ps[1]); err != nil {
		t.Fatal(err)
	}
	checkData(t, other, ps[1], releases[1])
	if same, blocks := sameBlocks(t, other, ps[0].SHA256, ps[1].SHA256, "share/big"); same != blocks {
		t.Errorf("share/big: %d of %d whole blocks shared with the entry listed", same, blocks)
	}
}

// TestShareAfterRemoved: entries another process removed after this Cache listed them do
// not take the donors' places: the newest entry still there lends its blocks.
func TestShareAfterRemoved(t *testing.T) {
	c := shareCache(t, "xfs")
	big := randomData(1, 1<<20+123)
	var releases [][]file
	for i := range maxDonors + 2 {
		releases = append(releases, []file{{"bin/tool", []byte{'v', byte('1' + i), '\n'}}, {"share/big", big}})
	}
	dir, ps := sharedRepo(t, releases)
	s := quick(t, dir)
	last := len(ps) - 1
	for _, p := range ps[:last] {
		if err := fetchOne(c, s, p); err != nil {
			t.Fatal(err)
		}
	}
	other, err := OpenCache(context.Background(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.removeEntries(func(e Entry) bool { return e.SHA256 == ps[0].SHA256 }); err != nil {
		t.Fatal(err)
	}
	if err := fetchOne(c, s, ps[last]); err != nil {
		t.Fatal(err)
	}
	checkData(t, c, ps[last], releases[last])
	if same, blocks := sameBlocks(t, c, ps[0].SHA256, ps[last].SHA256, "share/big"); same != blocks {
		t.Errorf("share/big: %d of %d whole blocks shared with the one entry left", same, blocks)
	}
}

// TestShareDamagedDonor: an older tar whose data no longer match its index shares
// nothing, and the new entry holds the data of its own archive.
func TestShareDamagedDonor(t *testing.T) {
	c := shareCache(t, "xfs")
	releases := versions()
	dir, ps := sharedRepo(t, releases[:2])
	s := quick(t, dir)
	if err := fetchOne(c, s, ps[0]); err != nil {
		t.Fatal(err)
	}
	m := member(t, c, ps[0].SHA256, "share/big")
	f, err := os.OpenFile(c.Path(ps[0].SHA256), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("damage"), m.Offset+1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := fetchOne(c, s, ps[1]); err != nil {
		t.Fatal(err)
	}
	checkData(t, c, ps[1], releases[1])
	same, blocks := sameBlocks(t, c, ps[0].SHA256, ps[1].SHA256, "share/big")
	if same == blocks {
		t.Errorf("share/big: all %d blocks shared with the damaged tar", blocks)
	}
}

// TestShareWrongArchive: an archive that is not the one its index entry names is refused
// as before, though its members are those of a cached version, and leaves nothing behind.
func TestShareWrongArchive(t *testing.T) {
	c := shareCache(t, "xfs")
	releases := versions()
	dir, ps := sharedRepo(t, releases[:2])
	s := quick(t, dir)
	if err := fetchOne(c, s, ps[0]); err != nil {
		t.Fatal(err)
	}
	wrong := ps[1]
	wrong.SHA256 = ps[0].SHA256[:10] + "0123456789" + ps[0].SHA256[20:]
	if err := fetchOne(c, s, wrong); !errors.Is(err, ErrMismatch) {
		t.Fatalf("fetch of a wrong archive: %v, want ErrMismatch", err)
	}
	if c.Has(wrong.SHA256) {
		t.Error("the wrong archive is in the cache")
	}
	if ents, _ := os.ReadDir(filepath.Join(c.dir, "tmp")); len(ents) != 0 {
		t.Errorf("tmp/ holds %d files, want none", len(ents))
	}
	checkData(t, c, ps[0], releases[0])
}

// TestShareDirect: a tar written with O_DIRECT, as where the boot cannot be told, is
// shared too, and on btrfs its other bytes written again, whole.
func TestShareDirect(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			dir := testfs.Mount(t, kind)
			releases := versions()
			var tars []*os.File
			var members [][]tarutil.Member
			for i, files := range releases[:2] {
				f, err := os.Create(filepath.Join(dir, string(rune('a'+i))+".tar"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				fw := newFileWriter(f, true)
				st, err := tarutil.Align(fw, bytes.NewReader(makeTar(t, files)), tarutil.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if err := fw.Close(); err != nil {
					t.Fatal(err)
				}
				tars, members = append(tars, f), append(members, st.Members)
			}
			d := &donors{by: map[content]held{}}
			d.remember(tars[0], members[0])
			before := usedBytes(t, dir)
			if n := d.share(tars[1], members[1]); n < 3<<20 {
				t.Errorf("shared %d bytes, want share/big's and share/tools'", n)
			}
			if grew := usedBytes(t, dir) - before; grew > 0 {
				t.Errorf("sharing took %d bytes of disk space, want some freed", grew)
			}
			got, err := os.ReadFile(tars[1].Name())
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if _, err := tarutil.Align(&want, bytes.NewReader(makeTar(t, releases[1])), tarutil.Limits{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("the shared tar's bytes (%d) are not the aligned tar's (%d)", len(got), want.Len())
			}
		})
	}
}

// TestShareAsNobody: a user's own cache shares too, FIDEDUPERANGE needing no privilege on
// files the user may write. As root, the test mounts an XFS and runs itself as nobody
// there (PKG_TEST_SHARE_DIR).
func TestShareAsNobody(t *testing.T) {
	dir := os.Getenv("PKG_TEST_SHARE_DIR")
	if dir == "" {
		if os.Geteuid() != 0 {
			t.Skip("run by root, as nobody")
		}
		testfs.NeedTools(t, "setpriv")
		dir = filepath.Join(testfs.Mount(t, "xfs"), "nobody")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		searchable(t, dir)
		cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
		cmd.Env = append(os.Environ(), "PKG_TEST_SHARE_DIR="+dir, "TMPDIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
		return
	}
	c, err := OpenCache(context.Background(), filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	repoDir, ps := sharedRepo(t, versions()[:2])
	s := quick(t, repoDir)
	for _, p := range ps {
		if err := fetchOne(c, s, p); err != nil {
			t.Fatal(err)
		}
	}
	if same, blocks := sameBlocks(t, c, ps[0].SHA256, ps[1].SHA256, "share/big"); same != blocks {
		t.Errorf("share/big: %d of %d whole blocks shared", same, blocks)
	}
}
