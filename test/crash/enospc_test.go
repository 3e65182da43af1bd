package crash

import (
	"archive/tar"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// smallSpec builds a package of n files of 1 to 4000 bytes: each costs an inode (its data
// are cloned from the cache's tail files on XFS, no block written), so a filesystem with
// less room than their inodes take stops staging midway.
func smallSpec(name, v string, n int) *spec {
	s := &spec{name: name, version: v, members: []member{{name: "data", typ: tar.TypeDir, mode: 0o755}, {name: "data/" + name, typ: tar.TypeDir, mode: 0o755}}}
	for i := range n {
		s.members = append(s.members, member{name: fmt.Sprintf("data/%s/%04d", name, i), typ: tar.TypeReg, mode: 0o644, data: content(i, 8+len(v), 1+i*37%4000)})
	}
	return s
}

// TestENOSPC runs installs, an upgrade and fetches on an XFS filesystem that runs out of
// space: filled before the command, so that staging fails midway, or filled the moment
// staging is done, so that the commit fails. Each fails naming the package, the operation
// and the path, and leaves the root, the database and the cache as they were, with no
// staging and no temporary file; once the space is freed the same commands work.
func TestENOSPC(t *testing.T) {
	mnt := testfs.Mount(t, "xfs")
	repoDir := t.TempDir()
	w := publish(t, repoDir, libSpec("lib", "1.0"), appSpec("app", "1", 400, "lib>=1.0"), appSpec("app", "2", 400, "lib>=1.0"),
		smallSpec("many", "1", 3000), smallSpec("many", "1.1", 3000), appSpec("big", "1", 1500))
	e := &env{t: t, bin: testfs.PkgBinary(t), root: filepath.Join(mnt, "root"), cache: filepath.Join(mnt, "cache"), repo: repoDir}
	filler := filepath.Join(mnt, "filler")
	e.ok("install", "app@1")
	e.ok("fetch", "many=1", "app@2")
	e.ok("fetch", "many@1.1")

	type attempt struct {
		setup []string // run first, with space
		args  []string
		leave int64 // bytes left free
		late  bool  // fill when staging is done, not before the command
		want  string
		// fits, if not nil, is what a commit that needs no new block leaves installed:
		// one whose records fit in the database's free pages and whose links take inodes
		// XFS has free in its chunks, which a full filesystem lets through. Whether a
		// late fill leaves such blocks depends on what XFS reclaims in the background
		// (post-EOF preallocations, unlinked inodes), so either outcome is right; so is a
		// commit recorded whose prefix links then found no space, which the next command
		// finishes.
		fits state
	}
	attempts := []attempt{
		{nil, []string{"install", "many=1"}, 64 << 10, false, "install many 1: ", nil},
		{nil, []string{"install", "many=1"}, 512 << 10, false, "install many 1: ", nil},
		{nil, []string{"install", "many=1"}, 1 << 20, false, "install many 1: ", nil},
		{nil, []string{"install", "app@2"}, 256 << 10, false, "install app 2: ", nil},
		{nil, []string{"install", "many=1"}, 0, true, "install many 1: ", nil}, // 3,000 file records need pages
		{nil, []string{"install", "app@2"}, 0, true, "install app 2: ", state{"lib": "1.0", "app": "2"}},
		{nil, []string{"fetch", "big"}, 2 << 20, false, "fetch big 1 from ", nil},
		{nil, []string{"install", "big"}, 4 << 20, false, "fetch big 1 from ", nil},
		{[]string{"install", "many=1"}, []string{"install", "many@1.1"}, 0, true, "install many 1.1: ", state{"lib": "1.0", "app": "1", "many": "1.1"}},
		{nil, []string{"install", "many@1.1"}, 1 << 20, false, "install many 1.1: ", nil},
	}
	for _, a := range attempts {
		if a.setup != nil {
			e.ok(a.setup...)
		}
		name := fmt.Sprintf("%s/leave=%dK/late=%v", strings.Join(a.args, " "), a.leave>>10, a.late)
		rootBefore, cacheBefore := rootTree(t, e.root), testfs.Tree(t, e.cache)
		stBefore, problems := checkRoot(e.root, w)
		for _, p := range problems {
			t.Fatalf("%s: before: %s", name, p)
		}
		stderr, code := e.runFull(a.args, filler, a.leave, a.late)
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: exit %d: %s", name, code, strings.TrimSpace(stderr))
		if code == 0 && a.fits != nil {
			e.fitted(name, a.fits, stBefore, w)
			continue
		}
		if code == 1 && a.fits != nil && strings.Contains(stderr, "the last change is recorded, but the links of its files in ") {
			// Committed, its records written, and then the prefix's links found no space:
			// the next command, with space, finishes them (the change is the new set).
			if !strings.Contains(stderr, "\npkg: hint: free space on the filesystem holding "+e.root+", then run 'pkg verify'") {
				t.Errorf("%s: stderr %q has no hint to free space and verify", name, stderr)
			}
			e.fitted(name, a.fits, stBefore, w)
			continue
		}
		if code != 1 || !strings.Contains(stderr, "pkg: "+a.want) || !strings.Contains(stderr, "no space left on device") ||
			!strings.Contains(stderr, "/") && !strings.Contains(stderr, "member ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and an error naming %q, the operation, the path and ENOSPC", name, code, stderr, a.want)
		}
		if strings.Contains(stderr, "panic") || strings.Count(errorLines(stderr), "\n") != 1 {
			t.Errorf("%s: stderr is not one error line: %q", name, stderr)
		}
		if !strings.Contains(stderr, "\npkg: hint: the filesystem holding ") {
			t.Errorf("%s: stderr %q has no hint that the filesystem is full", name, stderr)
		}
		testfs.SameTree(t, name+": root", rootTree(t, e.root), rootBefore)
		testfs.SameTree(t, name+": cache", testfs.Tree(t, e.cache), cacheBefore)
		e.ok("verify") // completes what the failed command left
		st, problems := checkRoot(e.root, w)
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
		if !maps.Equal(st, stBefore) {
			t.Errorf("%s: installed %v, was %v", name, st, stBefore)
		}
	}
	e.ok("install", "many@1.1", "app@2", "big")
	st, problems := checkRoot(e.root, w)
	for _, p := range problems {
		t.Errorf("after freeing space: %s", p)
	}
	if want := (state{"lib": "1.0", "app": "2", "many": "1.1", "big": "1"}); !maps.Equal(st, want) {
		t.Errorf("after freeing space: installed %v, want %v", st, want)
	}
	for _, p := range checkCache(e.cache, w) {
		t.Errorf("cache: %s", p)
	}

	// Removing is how a user frees space: it must work on a full filesystem.
	for _, leave := range []int64{1 << 20, 64 << 10, 16 << 10, 0} {
		if err := testfs.Fill(filler, leave); err != nil && leave > 0 {
			t.Fatal(err)
		}
	}
	if free, err := testfs.Free(mnt); err != nil || free > 16<<10 {
		t.Fatalf("filled: %d bytes free, %v", free, err)
	}
	e.ok("remove", "big")
	e.ok("verify")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if st, problems := checkRoot(e.root, w); len(problems) > 0 || st["big"] != "" {
		t.Errorf("after remove big on a full filesystem: installed %v, %v", st, problems)
	}
}

// fitted checks a root after a command that fitted on a full filesystem: it holds want,
// consistent; and then puts back the versions of before, for the attempts after it.
func (e *env) fitted(name string, want, before state, w world) {
	e.t.Helper()
	e.ok("verify")
	st, problems := checkRoot(e.root, w)
	for _, p := range problems {
		e.t.Errorf("%s: %s", name, p)
	}
	if !maps.Equal(st, want) {
		e.t.Errorf("%s: exit 0 with installed %v; want %v", name, st, want)
	}
	for n, v := range before {
		if st[n] != v {
			e.ok("install", n+"="+v)
		}
	}
}

// runFull runs pkg with args after filling the filesystem of path to leave bytes, or, when
// late, fills it once staging is done (the staged tree's top gets its mode), at pkg's next
// opening of its database (the intents, ahead of the commit), which waits meanwhile.
func (e *env) runFull(args []string, path string, leave int64, late bool) (stderr string, code int) {
	t := e.t
	if !late {
		if err := testfs.Fill(path, leave); err != nil {
			t.Fatal(err)
		}
		_, stderr, code = e.run(args...)
		return stderr, code
	}
	staged, stop, err := attribSeen(filepath.Join(e.root, ".pkg", "staging"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	filled := make(chan error, 1)
	g, err := gateOpens(filepath.Join(e.root, ".pkg", "db"), false, func(int32) bool { return staged() }, func() { filled <- fillAll(path, leave) })
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c := e.command(args...)
	c.Stderr = &out
	if err := c.Run(); err != nil && c.ProcessState == nil {
		t.Fatal(err)
	}
	g.close()
	select {
	case err := <-filled:
		if err != nil {
			t.Fatal(err)
		}
	default:
		if err := testfs.Fill(path, 0); err != nil { // so the caller has a file to remove
			t.Fatal(err)
		}
		t.Errorf("pkg %v: staging never completed", args)
	}
	return out.String(), c.ProcessState.ExitCode()
}

// fillAll fills the filesystem of path as testfs.Fill does, leave 0 taking every block
// it can: fallocate cannot take the last ones at once, as its extents need some, so it
// takes them in steps, each of which may find none it can take (ENOSPC).
func fillAll(path string, leave int64) error {
	if leave > 0 {
		return testfs.Fill(path, leave)
	}
	for _, leave := range []int64{1 << 20, 64 << 10, 16 << 10, 4 << 10, 0} {
		if err := testfs.Fill(path, leave); err != nil && !errors.Is(err, unix.ENOSPC) {
			return err
		}
	}
	return nil
}

// errorLines returns the lines of stderr that are not warnings or notes.
func errorLines(stderr string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if l != "" && !strings.HasPrefix(l, "pkg: warning: ") && !strings.HasPrefix(l, "pkg: note: ") && !strings.HasPrefix(l, "pkg: hint: ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// rootTree describes a root for before-and-after checks (testfs.RootTree).
func rootTree(t *testing.T, root string) map[string]string { return testfs.RootTree(t, root) }
