package install

import (
	"archive/tar"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// testCache is a Cache of one tar, under the sha256 pkgOf gives.
type testCache string

func (c testCache) Path(string) string { return string(c) }

func (c testCache) Members(string) ([]tarutil.Member, error) { return scanWithDigests(string(c)) }

// sizes of sharedTree's files: "big" and "other" have a tail past their last whole block.
const (
	bigSize   = 20*4096 + 100 // over minShared
	bigPrefix = bigSize &^ 4095
	exactSize = 17 * 4096
)

func randomData(seed uint64, n int) string {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 0))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// sharedTree is a package with files install clones, one it writes (small, between two
// that are checked by their extents) and a hardlink.
func sharedTree() []entry {
	return []entry{
		{name: "big", typ: tar.TypeReg, mode: 0o644, data: randomData(1, bigSize)},
		{name: "other", typ: tar.TypeReg, mode: 0o644, data: randomData(2, bigSize)},
		{name: "small", typ: tar.TypeReg, mode: 0o644, data: "small"},
		{name: "exact", typ: tar.TypeReg, mode: 0o644, data: randomData(3, exactSize)},
		{name: "same", typ: tar.TypeLink, link: "big"},
	}
}

// fragment rewrites the file at name 16 KiB at a time, each synced between blocks of
// another file, so that its blocks are not contiguous and a defragmenter has work to do.
func fragment(t *testing.T, name string) {
	t.Helper()
	data, err := os.ReadFile(name)
	must(t, err)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	defer f.Close()
	g, err := os.Create(name + ".gaps")
	must(t, err)
	defer os.Remove(name + ".gaps")
	defer g.Close()
	for b := range slices.Chunk([]byte(data), 16384) {
		_, err := f.Write(b)
		must(t, err)
		must(t, f.Sync())
		_, err = g.Write(make([]byte, 4096))
		must(t, err)
		must(t, g.Sync())
	}
}

// cloneInto replaces the first n bytes of the file dst with a clone of src's at off.
func cloneInto(t *testing.T, dst, src string, off, n int64) {
	t.Helper()
	d, err := os.OpenFile(dst, os.O_WRONLY, 0)
	must(t, err)
	defer d.Close()
	s, err := os.Open(src)
	must(t, err)
	defer s.Close()
	must(t, unix.IoctlFileCloneRange(int(d.Fd()), &unix.FileCloneRange{Src_fd: int64(s.Fd()), Src_offset: uint64(off), Src_length: uint64(n)}))
}

func pwrite(t *testing.T, name string, data string, off int64) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	must(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte(data), off)
	must(t, err)
}

func defragment(t *testing.T, kind, name string) {
	t.Helper()
	args := map[string][]string{"xfs": {"xfs_fsr", name}, "btrfs": {"btrfs", "filesystem", "defragment", name}}[kind]
	if _, err := exec.LookPath(args[0]); err != nil {
		testfs.Unavailable(t, args[0]+" not installed (apt-get install xfsprogs btrfs-progs)")
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// TestVerifyShared installs sharedTree from a fragmented tar on XFS, btrfs and ext4, in two
// roots, changes the first one way per case, and checks what VerifyWith reports, and whether
// it proved the big file intact by its extents (all of its cloned bytes unread) or read it:
// a file that still shares the cache tar's blocks at its member's place is not read, and
// every other is read, so that one sharing blocks with another place of the tar, or with
// another file, is reported.
func TestVerifyShared(t *testing.T) {
	type env struct {
		kind, dir, tar string
		off            map[string]int64 // data offsets in the tar
	}
	tests := []struct {
		name    string
		reflink bool // the case needs a filesystem that shares extents
		damage  func(t *testing.T, e env)
		want    []string
		unread  bool // big is proved intact by its extents
	}{
		{"intact", false, func(*testing.T, env) {}, nil, true},
		{"cloned-byte", false, func(t *testing.T, e env) { flipByte(t, filepath.Join(e.dir, "big"), 5000) },
			[]string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
		{"tail-byte", false, func(t *testing.T, e env) { flipByte(t, filepath.Join(e.dir, "big"), bigSize-1) },
			[]string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
		{"rewritten-same", false, func(t *testing.T, e env) {
			must(t, os.WriteFile(filepath.Join(e.dir, "big"), []byte(sharedTree()[0].data), 0))
		}, nil, false},
		{"rewritten-other", false, func(t *testing.T, e env) {
			must(t, os.WriteFile(filepath.Join(e.dir, "big"), []byte(sharedTree()[1].data), 0))
		}, []string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
		{"defragmented", true, func(t *testing.T, e env) { defragment(t, e.kind, filepath.Join(e.dir, "big")) }, nil, false},
		{"cloned-from-other-member", true, func(t *testing.T, e env) {
			cloneInto(t, filepath.Join(e.dir, "big"), e.tar, e.off["other"], bigPrefix)
		}, []string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
		{"cloned-one-block-off", true, func(t *testing.T, e env) {
			cloneInto(t, filepath.Join(e.dir, "big"), e.tar, e.off["big"]+4096, bigPrefix-4096)
		}, []string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
		{"cloned-from-other-file", true, func(t *testing.T, e env) {
			other := filepath.Join(filepath.Dir(e.tar), "other")
			must(t, os.WriteFile(other, []byte(sharedTree()[1].data), 0o644))
			cloneInto(t, filepath.Join(e.dir, "big"), other, 0, bigPrefix)
		}, []string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
		{"cloned-from-copy", true, func(t *testing.T, e env) {
			copy := filepath.Join(filepath.Dir(e.tar), "copy")
			must(t, os.WriteFile(copy, []byte(sharedTree()[0].data), 0o644))
			cloneInto(t, filepath.Join(e.dir, "big"), copy, 0, bigPrefix)
		}, nil, false},
		{"tar-rewritten", false, func(t *testing.T, e env) { // its blocks move: big shares nothing with it
			pwrite(t, e.tar, sharedTree()[0].data, e.off["big"])
		}, nil, false},
		{"tar-damaged", false, func(t *testing.T, e env) {
			pwrite(t, e.tar, sharedTree()[1].data, e.off["big"])
		}, nil, false},
		{"tar-tail-damaged", false, func(t *testing.T, e env) { pwrite(t, e.tar, "X", e.off["big"]+bigSize-1) }, nil, false},
		{"cache-gone", false, func(t *testing.T, e env) { must(t, os.Remove(e.tar)) }, nil, false},
		{"cache-gone-changed", false, func(t *testing.T, e env) {
			must(t, os.Remove(e.tar))
			flipByte(t, filepath.Join(e.dir, "big"), 5000)
		}, []string{"t 1: modified big (content)", "t 1: modified same (content)"}, false},
	}
	for _, kind := range []string{"xfs", "btrfs", "ext4"} {
		t.Run(kind, func(t *testing.T) {
			var base string
			if kind == "ext4" {
				base = t.TempDir()
			} else {
				base = testfs.Mount(t, kind)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if tt.reflink && kind == "ext4" {
						t.Skip("ext4 shares no extents")
					}
					work := filepath.Join(base, tt.name)
					must(t, os.Mkdir(work, 0o755))
					tarPath := alignedTar(t, work, sharedTree())
					fragment(t, tarPath)
					r := openRoot(t, filepath.Join(work, "root"))
					defer r.Close()
					p := pkgOf("t", "1")
					p.Bin = nil
					if _, err := r.installFrom(tarPath, p); err != nil {
						t.Fatal(err)
					}
					// Another root's install keeps the tar's blocks shared when this one's are not.
					r2 := openRoot(t, filepath.Join(work, "root2"))
					defer r2.Close()
					if _, err := r2.installFrom(tarPath, p); err != nil {
						t.Fatal(err)
					}
					members, err := scanWithDigests(tarPath)
					must(t, err)
					e := env{kind: kind, dir: r.pkgDir("t"), tar: tarPath, off: map[string]int64{}}
					for _, m := range members {
						e.off[m.Name] = m.Offset
					}
					_, intact, err := r.verify(testCache(tarPath), false, nil)
					must(t, err)
					// Every whole block of big (and of same, its hardlink), other and exact; on
					// btrfs, which clones a tail and truncates past it, every byte.
					if want := map[string]int64{"xfs": 3*bigPrefix + exactSize, "btrfs": 3*bigSize + exactSize}[kind]; intact != want {
						t.Fatalf("intact tree: %d bytes proved by extents, want %d", intact, want)
					}
					tt.damage(t, e)
					problems, unread, err := r.verify(testCache(tarPath), false, nil)
					must(t, err)
					var got []string
					for _, p := range problems {
						got = append(got, describe(p))
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("VerifyWith:\n got %q\nwant %q", got, tt.want)
					}
					if (unread == intact) != (tt.unread || kind == "ext4") {
						t.Errorf("%d bytes proved by extents, %d in the intact tree: want big proved so: %v", unread, intact, tt.unread)
					}
					full, err := r.Verify()
					must(t, err)
					if !slices.EqualFunc(full, problems, func(a, b FileError) bool { return describe(a) == describe(b) }) {
						t.Errorf("Verify, hashing all: %v, VerifyWith: %v", full, problems)
					}
				})
			}
		})
	}
}

// TestUnshared checks the extent comparison on maps made up to the byte: a file's range is
// matched only where it sits at the physical place of the tar's byte at the member's
// offset plus its own.
func TestUnshared(t *testing.T) {
	tar := []extent{{0, 1000, 100}, {100, 5000, 50}, {150, 9000, 100}}
	tests := []struct {
		name string
		file []extent
		off  int64
		size int64
		want []span
	}{
		{"all", []extent{{0, 1010, 90}, {90, 5000, 50}, {140, 9000, 60}}, 10, 200, nil},
		{"tail", []extent{{0, 1010, 90}, {90, 5000, 50}}, 10, 145, []span{{140, 145}}},
		{"extent-past-size", []extent{{0, 1010, 90}, {90, 5000, 4096}}, 10, 120, nil},
		{"none", nil, 10, 50, []span{{0, 50}}},
		{"one-off", []extent{{0, 1011, 90}}, 10, 90, []span{{0, 90}}},
		{"other-offset", []extent{{0, 1000, 90}}, 10, 90, []span{{0, 90}}},
		{"middle", []extent{{0, 1010, 20}, {20, 7000, 20}, {40, 1050, 50}}, 10, 90, []span{{20, 40}}},
		{"split-in-tar", []extent{{0, 1080, 30}}, 80, 30, []span{{20, 30}}},
		{"past-tar", []extent{{0, 9090, 100}}, 240, 100, []span{{10, 100}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unshared(tt.file, tar, tt.off, tt.size); !slices.Equal(got, tt.want) {
				t.Errorf("unshared = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestVerifySharedVersions: a tar whose member data lie on an older tar's blocks (the
// cache shares the files consecutive versions have in common) still proves the files
// installed from it intact by their extents, the member's place being the newer tar's, and
// goes on doing so once the older tar is gone.
func TestVerifySharedVersions(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			work := testfs.Mount(t, kind)
			older := alignedTar(t, work, append([]entry{{name: "added", typ: tar.TypeReg, mode: 0o644, data: randomData(9, 5000)}}, sharedTree()...))
			newer := alignedTar(t, work, sharedTree())
			om, err := scanWithDigests(older)
			must(t, err)
			nm, err := scanWithDigests(newer)
			must(t, err)
			dedupeMember(t, older, memberAt(om, "big"), newer, memberAt(nm, "big"))
			if shared, _, err := testfs.SharedBytes(newer); err != nil || shared < bigPrefix {
				t.Fatalf("newer tar: %d bytes shared (%v), want big's %d", shared, err, bigPrefix)
			}
			r := openRoot(t, filepath.Join(work, "root"))
			defer r.Close()
			p := pkgOf("t", "2")
			p.Bin = nil
			if _, err := r.installFrom(newer, p); err != nil {
				t.Fatal(err)
			}
			for _, step := range []string{"both tars", "older tar removed"} {
				if step == "older tar removed" {
					must(t, os.Remove(older))
				}
				problems, unread, err := r.verify(testCache(newer), false, nil)
				must(t, err)
				if len(problems) != 0 || unread < 2*bigPrefix { // big and other
					t.Errorf("%s: problems %v, %d bytes proved by extents, want none and at least %d", step, problems, unread, 2*bigPrefix)
				}
			}
		})
	}
}

// memberAt returns the member named name of ms.
func memberAt(ms []tarutil.Member, name string) tarutil.Member {
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	return tarutil.Member{}
}

// dedupeMember makes the whole blocks of member b's data in the tar dst share those of
// member a's in src, as the cache does for a member an older version holds.
func dedupeMember(t *testing.T, src string, a tarutil.Member, dst string, b tarutil.Member) {
	t.Helper()
	s, err := os.Open(src)
	must(t, err)
	defer s.Close()
	d, err := os.OpenFile(dst, os.O_RDWR, 0)
	must(t, err)
	defer d.Close()
	r := unix.FileDedupeRange{Src_offset: uint64(a.Offset), Src_length: uint64(a.Size &^ 4095),
		Info: []unix.FileDedupeRangeInfo{{Dest_fd: int64(d.Fd()), Dest_offset: uint64(b.Offset)}}}
	must(t, unix.IoctlFileDedupeRange(int(s.Fd()), &r))
	if r.Info[0].Status != unix.FILE_DEDUPE_RANGE_SAME || r.Info[0].Bytes_deduped != uint64(a.Size&^4095) {
		t.Fatalf("dedupe: status %d, %d bytes", r.Info[0].Status, r.Info[0].Bytes_deduped)
	}
}

// slowCache is a testCache whose index takes a while to read.
type slowCache struct{ testCache }

func (c slowCache) Members(sha string) ([]tarutil.Member, error) {
	time.Sleep(100 * time.Millisecond)
	return c.testCache.Members(sha)
}

// TestVerifySlowIndex checks that the files left for when a slow index is read are checked
// then, by their extents: the intact tree is proved so as with a quick one, and a changed
// byte in a cloned file is reported.
func TestVerifySlowIndex(t *testing.T) {
	base := testfs.Mount(t, "xfs")
	var entries []entry
	for i := range 40 { // files that need no index, for the workers to check meanwhile
		entries = append(entries, entry{name: fmt.Sprintf("s%d", i), typ: tar.TypeReg, mode: 0o644, data: randomData(uint64(i), 3000)})
	}
	entries = append(entries, sharedTree()...)
	tarPath := alignedTar(t, base, entries)
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("t", "1")
	p.Bin = nil
	if _, err := r.installFrom(tarPath, p); err != nil {
		t.Fatal(err)
	}
	_, quick, err := r.verify(testCache(tarPath), false, nil)
	must(t, err)
	problems, slow, err := r.verify(slowCache{testCache(tarPath)}, false, nil)
	must(t, err)
	if len(problems) != 0 || slow != quick || quick == 0 {
		t.Errorf("intact tree, slow index: %v, %d bytes proved by extents, %d with a quick index", problems, slow, quick)
	}
	flipByte(t, filepath.Join(r.pkgDir("t"), "big"), 5000)
	problems, _, err = r.verify(slowCache{testCache(tarPath)}, false, nil)
	must(t, err)
	var got []string
	for _, p := range problems {
		got = append(got, describe(p))
	}
	if want := []string{"t 1: modified big (content)", "t 1: modified same (content)"}; !slices.Equal(got, want) {
		t.Errorf("changed byte, slow index:\n got %q\nwant %q", got, want)
	}
}

// TestVerifyFullCacheDamaged installs sharedTree from a tar whose big member was damaged
// past what the cache's check at use samples, after its index was written, on XFS and
// btrfs: VerifyFull reports big, and its hardlink same, as damaged in the cache (naming the
// entry), not modified; a file changed in the root after a sound install stays modified.
func TestVerifyFullCacheDamaged(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			base := testfs.Mount(t, kind)
			for _, tt := range []struct {
				name       string
				tarDamage  bool  // before the install, in the tar
				rootChange bool  // after it, in the root
				chmod      bool  // after it, in the root: big's mode, which same, its hardlink, does not record
				kind       error // of big's finding, and of same's but where chmod
			}{
				{"cache-damaged", true, false, false, ErrCacheDamaged},
				{"changed-in-root", false, true, false, ErrModified},
				{"cache-damaged-mode-changed", true, false, true, ErrModified},
			} {
				t.Run(tt.name, func(t *testing.T) {
					work := filepath.Join(base, tt.name)
					must(t, os.Mkdir(work, 0o755))
					tarPath := alignedTar(t, work, sharedTree())
					members := digestsOf(t, tarPath)
					i := slices.IndexFunc(members, func(m tarutil.Member) bool { return m.Name == "big" })
					if tt.tarDamage {
						pwrite(t, tarPath, "DAMAGE", members[i].Offset+8*4096)
					}
					r := openRoot(t, filepath.Join(work, "root"))
					defer r.Close()
					p := pkgOf("t", "1")
					p.Bin = nil
					applyStaged(t, r, stageMembers(t, r, tarPath, p, members))
					if tt.rootChange {
						flipByte(t, filepath.Join(r.pkgDir("t"), "big"), 8*4096)
					}
					if tt.chmod {
						must(t, os.Chmod(filepath.Join(r.pkgDir("t"), "big"), 0o600))
					}
					problems, err := r.VerifyFull(membersCache{tarPath, members})
					must(t, err)
					if len(problems) != 2 {
						t.Fatalf("VerifyFull: %v, want big and same", problems)
					}
					for _, p := range problems {
						kind := tt.kind
						if tt.chmod && p.Path == "same" {
							kind = ErrCacheDamaged // its data alone differ
						}
						entry := "" // the damaged cache entry a finding names: none for a change in the root
						if kind == ErrCacheDamaged {
							entry = pkgOf("t", "1").SHA256
						}
						if !errors.Is(p.Err, kind) || !errors.Is(p.Err, ErrContent) || tt.chmod && p.Path == "big" && !errors.Is(p.Err, ErrMode) {
							t.Errorf("%s: %v, want %v (content)", p.Path, p.Err, kind)
						}
						if damaged := errors.Is(p.Err, ErrCacheDamaged); damaged == errors.Is(p.Err, ErrModified) {
							t.Errorf("%s: %v, both or neither of modified and damaged in the cache", p.Path, p.Err)
						}
						if p.Entry != entry {
							t.Errorf("%s: entry %q, want %q", p.Path, p.Entry, entry)
						}
					}
					fast, err := r.VerifyWith(membersCache{tarPath, members})
					must(t, err)
					if tt.tarDamage && !tt.chmod && len(fast) != 0 {
						t.Errorf("VerifyWith, reading no shared block: %v, want nothing", fast)
					}
				})
			}
		})
	}
}
