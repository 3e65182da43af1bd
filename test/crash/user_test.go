package crash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// TestOtherUser runs pkg as another user on a root pkg made as root: list reads it, an
// install is refused with an error that says the root is not the user's and a hint that
// says what to pass, and nothing changes.
func TestOtherUser(t *testing.T) {
	setpriv := setprivPath(t)
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} { // t.TempDir is private to root
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for d := filepath.Dir(base); d != "/"; d = filepath.Dir(d) {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm()&0o001 == 0 {
			testfs.Unavailable(t, d+" is not searchable by other users: set TMPDIR to a directory that is")
		}
	}
	repoDir := filepath.Join(base, "repo")
	w := publish(t, repoDir, appSpec("app", "1", 10), libSpec("lib", "1.0"))
	e := &env{t: t, bin: testfs.PkgBinary(t), root: filepath.Join(base, "root"), cache: filepath.Join(base, "cache"), repo: repoDir}
	e.ok("install", "lib")
	before := rootTree(t, e.root)
	if err := os.Chmod(filepath.Dir(e.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(base, "nobody-cache") // the other user's own
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cache, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	nobody := func(cache string, args ...string) (string, string, int) {
		c := asNobody(e.command(append([]string{"--cache", cache}, args...)...), setpriv, "/nonexistent")
		var o, er strings.Builder
		c.Stdout, c.Stderr = &o, &er
		c.Run()
		return o.String(), er.String(), c.ProcessState.ExitCode()
	}
	if out, stderr, code := nobody(cache, "list"); code != 0 || !strings.HasPrefix(out, "lib ") {
		t.Errorf("list as another user: exit %d, %q, %q", code, out, stderr)
	}
	if out, stderr, code := nobody(cache, "verify"); code != 0 || !strings.HasPrefix(out, "verified 1 package") ||
		!strings.Contains(stderr, "pkg: note: "+e.root+" is not yours: verifying without its lock") {
		t.Errorf("verify as another user: exit %d, %q, %q", code, out, stderr)
	}
	_, stderr, code := nobody(cache, "install", "app")
	if code != 1 || !strings.Contains(stderr, "pkg: root "+e.root+" is not yours to change: ") ||
		!strings.Contains(stderr, "pkg: hint: pkg reads and writes --root (PKG_ROOT) and --cache (PKG_CACHE)") {
		t.Errorf("install as another user: exit %d, %q", code, stderr)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), before)
	if st, problems := checkRoot(e.root, w); len(problems) != 0 || len(st) != 1 {
		t.Errorf("after the refused install: installed %v, %q", st, problems)
	}

	// Another user's cache is refused as such, with the same hint.
	if _, stderr, code := nobody(e.cache, "search"); code != 1 || !strings.Contains(stderr, "pkg: cache "+e.cache+" is not yours to write: ") ||
		!strings.Contains(stderr, "pkg: hint: pkg reads and writes") {
		t.Errorf("search with another user's cache: exit %d, %q", code, stderr)
	}

	// The user's own cache made read-only is told apart from another user's.
	ro := filepath.Join(cache, "ro")
	if _, stderr, code := nobody(ro, "search"); code != 0 {
		t.Fatalf("search with a new cache: exit %d, %q", code, stderr)
	}
	if err := os.Chmod(filepath.Join(ro, "tmp"), 0o555); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := nobody(ro, "search"); code != 1 || !strings.Contains(stderr, "pkg: cache "+ro+" is yours but read-only (") ||
		strings.Contains(stderr, "another user's") {
		t.Errorf("search with a read-only cache of the user's: exit %d, %q", code, stderr)
	}

	// root installing into a root of another user's is told what that means.
	theirs := &env{t: t, bin: e.bin, root: filepath.Join(base, "theirs"), cache: e.cache, repo: repoDir}
	if err := os.Mkdir(theirs.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs.root, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, stderr := theirs.ok("install", "lib"); !strings.Contains(stderr, "pkg: note: running as root in "+theirs.root+", which belongs to uid 65534") {
		t.Errorf("install as root into another user's root: %q", stderr)
	}
}

// setprivPath returns setpriv's path, for asNobody, and makes the test unavailable unless it
// runs as root and has setpriv.
func setprivPath(t *testing.T) string {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	switch {
	case os.Geteuid() != 0:
		testfs.Unavailable(t, "needs root, to run pkg as another user")
	case err != nil:
		testfs.Unavailable(t, "setpriv (util-linux) missing: "+err.Error())
	}
	return setpriv
}

// asNobody makes c, a command of env.command's, run as uid and gid 65534 (nobody) with no
// supplementary groups and HOME set to home, and returns it.
func asNobody(c *exec.Cmd, setpriv, home string) *exec.Cmd {
	c.Args = append([]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", c.Path}, c.Args[1:]...)
	c.Path = setpriv
	c.Env = append(os.Environ(), "HOME="+home)
	return c
}
