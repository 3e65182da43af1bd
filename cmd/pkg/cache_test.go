package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

func TestCacheCleanCount(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, tt := range []struct {
		fetch []string
		want  string
	}{
		{[]string{"libgreet"}, "removed 1 cached package, "},
		{[]string{"hello"}, "removed 2 cached packages, "},
		{nil, "removed 0 cached packages, 0 B of archives\n"},
	} {
		if len(tt.fetch) > 0 {
			e.ok(append([]string{"fetch"}, tt.fetch...)...)
		}
		if out, _ := e.ok("cache", "clean"); !strings.HasPrefix(out, tt.want) {
			t.Errorf("cache clean after fetch %v: %q, want %q...", tt.fetch, out, tt.want)
		}
	}
}

// TestCacheListUnreadable: cache list says which entries it cannot name, and fails; on an
// empty cache it says there is nothing.
func TestCacheListUnreadable(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("fetch", "libgreet")
	idx, _ := filepath.Glob(filepath.Join(e.cache, "tars", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("digests files: %q", idx)
	}
	if err := os.WriteFile(idx[0], []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := e.pkg("cache", "list")
	if code != 1 || !strings.Contains(out, "  unknown package  ") ||
		!strings.Contains(stderr, "cannot read which package each of 1 cached archive is (read "+idx[0]+": not an entry index): damaged: ") {
		t.Errorf("cache list with a damaged entry: exit %d, %q, %q", code, out, stderr)
	}
	e.ok("cache", "clean")
	if out, stderr := e.ok("cache", "list"); out != "" || stderr != "pkg: note: nothing is cached in "+e.cache+"\n" {
		t.Errorf("cache list of an empty cache: %q, %q", out, stderr)
	}
}

// TestCacheMissing checks that the cache commands on a cache that does not exist say so and
// create nothing: a mistyped --cache makes no directory.
func TestCacheMissing(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, args := range [][]string{{"cache", "list"}, {"cache", "clean"}} {
		out, stderr := e.ok(args...)
		if want := "pkg: note: nothing is cached: no cache at " + e.cache + "\n"; out != "" || stderr != want {
			t.Errorf("pkg %s: %q, %q; want no output and %q", strings.Join(args, " "), out, stderr, want)
		}
		if _, err := os.Stat(e.cache); !os.IsNotExist(err) {
			t.Fatalf("pkg %s made the cache: %v", strings.Join(args, " "), err)
		}
	}
}

// TestCleanNamesUsers runs cache clean while another pkg process downloads into the cache:
// clean names that process while it waits, and removes the entry once the process is done.
func TestCleanNamesUsers(t *testing.T) {
	bin := testfs.PkgBinary(t)
	srv := holdDownloads(t) // until clean names the fetch
	e := newEnv(t, t.TempDir(), srv.URL)
	fetch := exec.Command(bin, "--cache", e.cache, "--repo", srv.URL, "fetch", "libgreet")
	if err := fetch.Start(); err != nil {
		t.Fatal(err)
	}
	<-srv.got
	var out bytes.Buffer
	want := fmt.Sprintf("pid %d (pkg --cache %s", fetch.Process.Pid, e.cache)
	stderr := &releaseOn{want: want, release: srv.free}
	code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "cache", "clean"}, &out, stderr)
	if err := fetch.Wait(); err != nil {
		t.Errorf("pkg fetch: %v", err)
	}
	if code != 0 || !strings.HasPrefix(out.String(), "removed 1 cached package") || !strings.Contains(stderr.String(), want) {
		t.Errorf("cache clean while pkg fetch runs: exit %d, %q, %q; want a note naming %s", code, out.String(), stderr.String(), want)
	}
}

// TestNotCache gives a home directory as the cache, with files named as a cache's are in
// tmp/ and tars/: every command that uses the cache refuses it, naming it, says what to do,
// and leaves it as it was.
func TestNotCache(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.initRoot()
	e.cache = t.TempDir()
	sha := strings.Repeat("a", 64)
	testfs.OldFiles(t, e.cache, "tmp/notes.txt", "tmp/hello-1.tar", "tars/"+sha+".tar", "tars/"+sha+".idx", "tars/photos.tar")
	before := testfs.Tree(t, e.cache)
	for _, args := range [][]string{{"search"}, {"fetch", "libgreet"}, {"install", "libgreet"}, {"cache", "list"}, {"cache", "clean"}, {"cache", "prune"}} {
		_, stderr, code := e.pkg(args...)
		if want := "pkg: cache " + e.cache + " is not a pkg cache: it is not empty and has no CACHEDIR.TAG\n" +
			"pkg: hint: pkg deletes files in its cache, so it makes one only in a new or empty directory and uses no other: point --cache (PKG_CACHE) at a new or empty directory\n"; code != 1 || stderr != want {
			t.Errorf("pkg %s: exit %d, %q; want 1, %q", strings.Join(args, " "), code, stderr, want)
		}
		testfs.SameTree(t, "pkg "+strings.Join(args, " "), testfs.Tree(t, e.cache), before)
	}
}

// TestSymlinkedCacheDir makes a cache's tmp/ a symlink to a directory of old files named as
// the cache's temporary files are: the commands that use the cache refuse it, naming the
// symlink, and remove nothing there.
func TestSymlinkedCacheDir(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("fetch", "libgreet")
	outside := t.TempDir()
	testfs.OldFiles(t, outside, "hello-1.tar", "idx-2", "notes.txt")
	before := testfs.Tree(t, outside)
	tmp := filepath.Join(e.cache, "tmp")
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, tmp); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"search"}, {"cache", "clean"}} {
		_, stderr, code := e.pkg(args...)
		if want := "pkg: cache " + e.cache + " is not a pkg cache: " + tmp + " is a symlink, which pkg does not follow\n"; code != 1 || !strings.HasPrefix(stderr, want) {
			t.Errorf("pkg %s: exit %d, %q; want 1, %q", strings.Join(args, " "), code, stderr, want)
		}
	}
	testfs.SameTree(t, "tmp/'s target", testfs.Tree(t, outside), before)
	if _, err := os.Stat(filepath.Join(e.cache, "tars")); err != nil {
		t.Error(err)
	}
}

// TestEmptyCacheDir gives an empty directory as the cache: pkg makes its cache there,
// tagged.
func TestEmptyCacheDir(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.cache = t.TempDir()
	e.ok("fetch", "libgreet")
	if b, err := os.ReadFile(filepath.Join(e.cache, "CACHEDIR.TAG")); err != nil || !strings.HasPrefix(string(b), "Signature: 8a477f597d28d172789f06886806bc55\n# ") {
		t.Errorf("CACHEDIR.TAG: %q, %v", b, err)
	}
	if out, _ := e.ok("cache", "clean"); !strings.HasPrefix(out, "removed 1 cached package, ") {
		t.Errorf("cache clean: %q", out)
	}
}

// agedEnv installs libgreet and fetches fortunes and hello, whose entries it makes last
// used 40 and 10 days ago.
func agedEnv(t *testing.T) *env {
	e := newEnv(t, t.TempDir(), demoRepo)
	e.ok("install", "libgreet")
	e.ok("fetch", "fortunes", "hello")
	testrepo.Age(t, e.cache, map[string]time.Duration{"fortunes": 40 * 24 * time.Hour, "hello": 10 * 24 * time.Hour})
	return e
}

// cachedNames returns the packages cache list shows.
func (e *env) cachedNames() []string {
	out, _ := e.ok("cache", "list")
	var names []string
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 1 {
			names = append(names, f[1])
		}
	}
	return names
}

// TestPruneLimits: cache prune says what it removed by which limit, and, past
// --max-size, what is left over it. Session's TestPruneLimits has what each limit removes.
func TestPruneLimits(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want, note string
	}{
		{[]string{"--older-than", "30d"}, "removed 1 cached package no installed package uses and unused for 30 days, ", ""},
		{[]string{"--max-size", "1"}, "removed 2 cached packages no installed package uses, the least recently used first, ",
			"pkg: note: the cache takes "},
	} {
		e := agedEnv(t)
		out, stderr := e.ok(append([]string{"cache", "prune"}, tc.args...)...)
		if !strings.HasPrefix(out, tc.want) || !strings.HasPrefix(stderr, tc.note) || tc.note == "" && stderr != "" {
			t.Errorf("cache prune %v: %q, %q; want %q..., %q...", tc.args, out, stderr, tc.want, tc.note)
		}
		if tc.note != "" && !strings.HasSuffix(stderr, "over its limit of 1 B: the rest is what installed packages use\n") {
			t.Errorf("cache prune %v: note %q", tc.args, stderr)
		}
	}
}

// TestPruneBadLimits: a value the flag cannot read is a usage error naming the flag, and
// nothing is removed.
func TestPruneBadLimits(t *testing.T) {
	e := agedEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--older-than", "a month"}, `pkg: cache prune --older-than: duration "a month": want 30d, 720h or the like`},
		{[]string{"--older-than", "-3d"}, `pkg: cache prune --older-than: duration "-3d": want whole days, such as 30d`},
		{[]string{"--max-size", "10 gigs"}, `pkg: cache prune --max-size: size "10 gigs": want a number and a unit, such as 20GiB or 500MB`},
		{[]string{"--max-size", "-1GiB"}, `pkg: cache prune --max-size: size "-1GiB" is negative`},
	} {
		_, stderr, code := e.pkg(append([]string{"cache", "prune"}, tc.args...)...)
		if want := tc.want + "\npkg: hint: run 'pkg cache prune --help' for usage\n"; code != 2 || stderr != want {
			t.Errorf("cache prune %v: exit %d, %q; want 2, %q", tc.args, code, stderr, want)
		}
	}
	if got := e.cachedNames(); len(got) != 3 {
		t.Errorf("after bad limits, cached: %v", got)
	}
}

// TestCacheListDisk: cache list says the disk its entries take, as prune counts it.
func TestCacheListDisk(t *testing.T) {
	e := agedEnv(t)
	out, stderr := e.ok("cache", "list")
	if !strings.HasPrefix(stderr, "pkg: note: 3 cached packages, ") || !strings.HasSuffix(stderr, " KiB of disk (a block several share counted once)\n") ||
		strings.Count(out, "\n") != 3 {
		t.Errorf("cache list: %q, %q", out, stderr)
	}
}

// TestCacheCleanShared: where a root's files share the blocks of the cached archives they
// were cloned from (XFS, btrfs), cache clean frees far less than the archives took; its
// line gives the figure cache list counts as what the archives took, and says that the
// blocks installed packages share stay in use, rather than call it freed.
func TestCacheCleanShared(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			base := testfs.Mount(t, kind)
			dir, archive := filepath.Join(t.TempDir(), "repo"), filepath.Join(t.TempDir(), "big.tar")
			data := pax(t, moded(tf("bin/big", "#!/bin/sh\n"), 0o755), tf("share/big/data", strings.Repeat("b", 4<<20)))
			if err := os.WriteFile(archive, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := repo.Add(t.Context(), dir, archive, repo.Package{Name: "big", Version: "1", Bin: testrepo.Commands("bin/big")}, false, nil); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, base, dir)
			e.ok("install", "big")
			_, listed := e.ok("cache", "list")
			took, ok := strings.CutPrefix(listed, "pkg: note: 1 cached package, ")
			took, _, _ = strings.Cut(took, " of disk")
			if !ok {
				t.Fatalf("cache list: %q", listed)
			}
			before := syncedFree(t, base)
			out, _ := e.ok("cache", "clean")
			freed := syncedFree(t, base) - before
			t.Logf("cache clean of an archive of %s freed %d bytes", took, freed)
			if freed > 2<<20 {
				t.Fatalf("cache clean freed %d bytes of an archive of 4 MiB: the root shares none of its blocks, as this test needs", freed)
			}
			if want := "removed 1 cached package, " + took + " of archives (blocks installed packages share with them stay in use)\n"; out != want {
				t.Errorf("cache clean of an archive a root shares: %q, want %q", out, want)
			}
		})
	}
}

// syncedFree returns the bytes free on the filesystem of dir once its writes are on disk,
// as df shows them after a sync.
func syncedFree(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	free, err := testfs.Free(dir)
	if err != nil {
		t.Fatal(err)
	}
	return free
}

// TestPruneNoDefaultRoot: where the default root does not exist, cache prune, list and clean
// work from the roots the cache records, the missing one using nothing, and create no root;
// a root named by --root that does not exist is still refused, with nothing removed.
func TestPruneNoDefaultRoot(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("PKG_ROOT", "")
	home := filepath.Join(base, "data", "pkg")
	e := newEnv(t, base, demoRepo)
	e.ok("install", "hello")
	e.ok("fetch", "fortunes")
	pkg := func(args ...string) (string, string, int) {
		var out, stderr bytes.Buffer
		code := run(append([]string{"pkg", "--cache", e.cache}, args...), &out, &stderr)
		return out.String(), stderr.String(), code
	}

	if out, stderr, code := pkg("cache", "list"); code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("cache list without the default root: exit %d, %q, %q", code, out, stderr)
	}
	typo := filepath.Join(base, "typo")
	if _, stderr, code := pkg("--root", typo, "cache", "prune"); code != 1 || !strings.Contains(stderr, "no root at "+typo+": nothing was ever installed there") {
		t.Errorf("cache prune --root %s: exit %d, %q; want it refused", typo, code, stderr)
	}
	if got := e.cachedNames(); len(got) != 3 {
		t.Errorf("after the refused prune, cached: %v", got)
	}
	out, stderr, code := pkg("cache", "prune")
	if code != 0 || !strings.HasPrefix(out, "removed 1 cached package no installed package uses, ") {
		t.Errorf("cache prune without the default root: exit %d, %q, %q", code, out, stderr)
	}
	if got, want := strings.Join(e.cachedNames(), " "), "hello libgreet"; got != want {
		t.Errorf("after the prune, cached %q; want %q, what %s uses", got, want, e.root)
	}
	if out, stderr, code := pkg("cache", "clean"); code != 0 || !strings.HasPrefix(out, "removed 2 cached packages, ") {
		t.Errorf("cache clean without the default root: exit %d, %q, %q", code, out, stderr)
	}
	for _, dir := range []string{home, typo} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the cache commands made %s: %v", dir, err)
		}
	}
}
