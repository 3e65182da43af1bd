package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/repo"
)

// runEnv is a repository of scripts, a user's root and a cache, and the pkg binary, for
// pkg run, which replaces its process with the command and so cannot run in the test's.
type runEnv struct {
	*env
	bin, base string
}

// newRunEnv returns a runEnv in base, its repository base/repo.
func newRunEnv(t *testing.T, base string) *runEnv {
	return &runEnv{env: newEnv(t, base, filepath.Join(base, "repo")), bin: testfs.PkgBinary(t), base: base}
}

// publishScript adds package name at version to the repository, one script per command.
func (e *runEnv) publishScript(name, version string, scripts map[string]string) {
	e.t.Helper()
	ents := []ent{td("bin/")}
	var bins []repo.Command
	for cmd, body := range scripts {
		f := tf("bin/"+cmd, "#!/bin/sh\n"+body+"\n")
		f.hdr.Mode = 0o755
		ents = append(ents, f)
		bins = append(bins, repo.Command{Name: cmd, Path: "bin/" + cmd})
	}
	addHostile(e.t, e.base, repo.Package{Name: name, Version: version, Bin: bins}, pax(e.t, ents...))
}

// run runs pkg run with args and returns its stdout, stderr and exit status.
func (e *runEnv) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	return e.exec(append([]string{"--repo", e.repo, "run"}, args...)...)
}

// exec runs pkg with the env's root and cache, and args, and returns its stdout, stderr
// and exit status.
func (e *runEnv) exec(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"--root", e.root, "--cache", e.cache}, args...)...)
	var o, er bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &er
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		e.t.Fatal(err)
	}
	return o.String(), er.String(), code
}

// runRoots returns the run roots in the cache.
func (e *runEnv) runRoots() []string {
	e.t.Helper()
	roots, err := filepath.Glob(filepath.Join(e.cache, "run", strings.Repeat("[0-9a-f]", 32)))
	if err != nil {
		e.t.Fatal(err)
	}
	return roots
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestRun runs commands with pkg run: the first run makes a root under the cache and runs
// the command with its arguments, passing its exit status through; a second reuses that
// root without reading the index or writing its database; --with adds packages, whose
// commands are on PATH; a new version published makes a new root; a package with several
// commands needs --cmd; two runs at once make one root; and the user's root is never
// changed.
func TestRun(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": `echo "tool 1 $*"; if command -v helper >/dev/null; then helper; fi; exit 3`})
	e.publishScript("helper", "1", map[string]string{"helper": "echo helper 1"})
	e.publishScript("multi", "1", map[string]string{"a": "echo a", "b": "echo b"})
	e.ok("install", "-q", "multi")
	userRoot := testfs.Tree(t, e.root)

	out, stderr, code := e.run("tool", "--", "x", "y z", "--cmd")
	if out != "tool 1 x y z --cmd\n" || code != 3 || !strings.Contains(stderr, "installed tool 1 into "+filepath.Join(e.cache, "run")) {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q; want the command's output and exit status 3", code, out, stderr)
	}
	roots := e.runRoots()
	if len(roots) != 1 {
		t.Fatalf("run roots after the first run: %q", roots)
	}
	first := roots[0]
	tree, ino, db := testfs.Tree(t, first), inodeOf(t, filepath.Join(first, "pkgs", "tool")), filepath.Join(first, ".pkg", "db")
	dbInfo, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("warm", func(t *testing.T) {
		out, stderr, code := e.run("tool", "--", "again")
		if out != "tool 1 again\n" || code != 3 || stderr != "" {
			t.Fatalf("warm run: exit %d, stdout %q, stderr %q; want the output, and nothing said", code, out, stderr)
		}
		testfs.SameTree(t, "run root after a warm run", testfs.Tree(t, first), tree)
		if now, err := os.Stat(db); err != nil || !now.ModTime().Equal(dbInfo.ModTime()) || inodeOf(t, filepath.Join(first, "pkgs", "tool")) != ino {
			t.Errorf("warm run changed the run root: database %v, %v", now.ModTime(), err)
		}
		// Resolved again (the memo bypassed), the set is the same: the root is reused as it is.
		if out, stderr, code := e.run("--refresh", "tool"); out != "tool 1 \n" || code != 3 || strings.Contains(stderr, "installed") || len(e.runRoots()) != 1 {
			t.Errorf("run --refresh: exit %d, stdout %q, stderr %q; roots %q", code, out, stderr, e.runRoots())
		}
		if inodeOf(t, filepath.Join(first, "pkgs", "tool")) != ino {
			t.Errorf("run --refresh installed tool again")
		}
	})
	t.Run("with", func(t *testing.T) {
		out, stderr, code := e.run("--with", "helper", "tool")
		if out != "tool 1 \nhelper 1\n" || code != 3 || len(e.runRoots()) != 2 {
			t.Errorf("run --with helper tool: exit %d, stdout %q, stderr %q, roots %q; want helper on PATH, in a root of its own", code, out, stderr, e.runRoots())
		}
	})
	t.Run("commands", func(t *testing.T) {
		for _, c := range []struct {
			args       []string
			code       int
			out, error string
		}{
			{[]string{"multi"}, 2, "", `pkg: run multi 1: the package has several commands, none named multi: a, b (--cmd NAME picks one)`},
			{[]string{"--cmd", "nope", "tool"}, 2, "", `pkg: run tool 1: no command "nope": it has tool (--cmd NAME picks one)`},
			{[]string{"--cmd", "b", "multi"}, 0, "b\n", ""},
			{[]string{"--cmd", "helper", "--with", "helper", "tool"}, 0, "helper 1\n", ""},
		} {
			roots := len(e.runRoots())
			out, stderr, code := e.run(c.args...)
			if code != c.code || out != c.out || !strings.Contains(stderr, c.error) {
				t.Errorf("run %q: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", c.args, code, out, stderr, c.code, c.out, c.error)
			}
			if c.code != 0 && len(e.runRoots()) != roots {
				t.Errorf("run %q, refused, made a root", c.args)
			}
		}
	})
	t.Run("new version", func(t *testing.T) {
		e.publishScript("tool", "2", map[string]string{"tool": `echo "tool 2 $*"`})
		out, stderr, code := e.run("tool")
		if out != "tool 2 \n" || code != 0 || !strings.Contains(stderr, "installed tool 2") {
			t.Fatalf("run after tool 2 was published: exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		if out, _, _ := e.run("tool@1"); out != "tool 1 \n" {
			t.Errorf("run tool@1: %q", out)
		}
		testfs.SameTree(t, "the first run root", testfs.Tree(t, first), tree)
	})
	t.Run("at once", func(t *testing.T) {
		e.publishScript("fresh", "1", map[string]string{"fresh": "echo fresh"})
		roots := len(e.runRoots())
		var wg sync.WaitGroup
		outs := make([]string, 4)
		for i := range outs {
			wg.Go(func() {
				out, stderr, code := e.run("fresh")
				outs[i] = out + stderr
				if code != 0 {
					outs[i] += " exit " + string(rune('0'+code))
				}
			})
		}
		wg.Wait()
		for _, o := range outs {
			if !strings.HasPrefix(o, "fresh\n") || strings.Contains(o, "exit") {
				t.Errorf("one of four runs at once: %q", o)
			}
		}
		if got := len(e.runRoots()); got != roots+1 {
			t.Errorf("four runs at once of one set made %d roots", got-roots)
		}
	})
	t.Run("prune", func(t *testing.T) {
		before := len(e.runRoots())
		e.ok("cache", "prune", "--older-than", "1h")
		list, _ := e.ok("cache", "list")
		for _, want := range []string{"tool 1", "tool 2", "helper 1", "fresh 1"} {
			if !strings.Contains(list, want) {
				t.Errorf("cache list after a prune of what is an hour old: %q; want %s, which a run root used just now holds", list, want)
			}
		}
		if got := len(e.runRoots()); got != before {
			t.Errorf("a prune of what is an hour old left %d of %d run roots", got, before)
		}
		if out, stderr, code := e.run("--offline", "--refresh", "tool@1"); out != "tool 1 \n" || code != 3 {
			t.Errorf("run --offline after a prune: exit %d, %q, %q", code, out, stderr)
		}
		out, _ := e.ok("cache", "prune")
		if !strings.Contains(out, "run roots no command runs from") || len(e.runRoots()) != 0 {
			t.Errorf("cache prune: %q, %d run roots left; want every idle one removed", out, len(e.runRoots()))
		}
		if list, _ := e.ok("cache", "list"); strings.Contains(list, "tool 1") {
			t.Errorf("cache list after a prune: %q; want tool 1 gone with the run roots", list)
		}
		if _, stderr, code := e.run("--offline", "tool@1"); code != 1 || !strings.Contains(stderr, "not in the cache: tool 1") {
			t.Errorf("run --offline after the run roots went: exit %d, %q; want not in the cache", code, stderr)
		}
	})
	testfs.SameTree(t, "the user's root", testfs.Tree(t, e.root), userRoot)
}

// TestRunLock runs with --lock: the lockfile's version although a newer one is published,
// again from the same root while the lockfile is unchanged, and, once the lockfile moves
// to the newer version, that one from a new root; a package the lockfile does not lock is
// refused by name, and the user's root is never changed.
func TestRunLock(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo tool 1"})
	e.publishScript("helper", "1", map[string]string{"helper": "echo helper 1"})
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	e.publishScript("tool", "2", map[string]string{"tool": "echo tool 2"})
	e.ok("install", "-q", "helper")
	userRoot := testfs.Tree(t, e.root)

	if out, stderr, code := e.run("--lock", lock, "tool"); out != "tool 1\n" || code != 0 || !strings.Contains(stderr, "installed tool 1 into") {
		t.Fatalf("run --lock at tool 1: exit %d, stdout %q, stderr %q; want tool 1, installed for the run", code, out, stderr)
	}
	if out, stderr, code := e.run("--lock", lock, "tool"); out != "tool 1\n" || code != 0 || stderr != "" {
		t.Errorf("run --lock again: exit %d, stdout %q, stderr %q; want tool 1, nothing said", code, out, stderr)
	}
	if roots := e.runRoots(); len(roots) != 1 {
		t.Fatalf("run roots %q, want one", roots)
	}

	e.ok("lock", "-o", lock, "tool@2")
	if out, stderr, code := e.run("--lock", lock, "tool"); out != "tool 2\n" || code != 0 || !strings.Contains(stderr, "installed tool 2 into") || len(e.runRoots()) != 2 {
		t.Errorf("run --lock after the lockfile moved to tool 2: exit %d, stdout %q, stderr %q, roots %q; want tool 2 from a new root", code, out, stderr, e.runRoots())
	}
	if _, stderr, code := e.run("--lock", lock, "helper"); code != 1 || !strings.Contains(stderr, lock+" does not lock helper for "+repo.Host) {
		t.Errorf("run --lock of a package the lockfile lacks: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := e.run("--lock", lock, "tool@1"); code != 1 || !strings.Contains(stderr, lock+" locks tool 2") {
		t.Errorf("run --lock of another version than locked: exit %d, stderr %q", code, stderr)
	}
	if out, _, code := e.run("tool"); out != "tool 2\n" || code != 0 {
		t.Errorf("run without the lockfile: exit %d, stdout %q; want the newest, tool 2", code, out)
	}
	testfs.SameTree(t, "the user's root after runs with --lock", testfs.Tree(t, e.root), userRoot)
}

// TestRunLockReadsNoIndex: a run with --lock reads no index, as pkg sync does: with the
// archives in the cache it asks the repository for nothing, and without them it asks for
// the archives alone, by the lockfile's URLs; so does a run of it repaired.
func TestRunLockReadsNoIndex(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo tool 1"})
	var mu sync.Mutex
	var asked []string
	files := http.FileServer(http.Dir(filepath.Join(base, "repo")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.repo = srv.URL
	took := func() []string {
		mu.Lock()
		defer mu.Unlock()
		got := asked
		asked = nil
		return got
	}
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	took()
	if out, stderr, code := e.exec("run", "--lock", lock, "tool"); out != "tool 1\n" || code != 0 {
		t.Fatalf("run --lock: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if got, want := took(), []string{"/tool-1.tar"}; !slices.Equal(got, want) {
		t.Errorf("run --lock of an archive not cached asked for %q, want %q", got, want)
	}
	os.RemoveAll(filepath.Join(e.cache, "run"))
	if out, stderr, code := e.exec("run", "--lock", lock, "tool"); out != "tool 1\n" || code != 0 {
		t.Fatalf("run --lock from the cache: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if got := took(); len(got) != 0 {
		t.Errorf("run --lock of an archive cached asked for %q, want nothing", got)
	}
	roots := e.runRoots()
	if len(roots) != 1 {
		t.Fatalf("run roots %q, want one", roots)
	}
	if err := os.Remove(filepath.Join(roots[0], "bin", "tool")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(e.cache, "run", "memo"))
	if out, stderr, code := e.exec("run", "--lock", lock, "tool"); out != "tool 1\n" || code != 0 {
		t.Fatalf("run --lock whose command was deleted: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if got := took(); len(got) != 0 {
		t.Errorf("run --lock repaired from the cache asked for %q, want nothing", got)
	}
}

// TestRunLockHints: a run of a lockfile whose repository moved is advised the same run
// with --repo naming where it is now, not to check a --repo it was not given; offline,
// with the cache lacking its archives, the same run online, which fetches the versions the
// lockfile pins ('pkg fetch NAME' would fetch the index's).
func TestRunLockHints(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo tool 1"})
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")

	e.cache = filepath.Join(base, "empty cache")
	_, stderr, code := e.exec("--offline", "run", "--lock", lock, "tool")
	if want := "pkg: hint: run 'pkg --root " + e.root + " --cache '" + e.cache + "' run --lock " + lock + " tool' once online, without --offline"; code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "pkg fetch") {
		t.Errorf("offline run --lock with no archive cached: exit %d, %q; want the hint %q", code, stderr, want)
	}

	moved := filepath.Join(base, "moved")
	if err := os.Rename(e.repo, moved); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = e.exec("run", "--lock", lock, "tool")
	for _, want := range []string{
		"pkg: run tool of " + lock + ": repository repo (from lockfile " + lock + "): no repository at " + e.repo,
		"pkg: hint: the repository is no longer where " + lock + " records it: name where it is now, or a copy of it, with 'pkg --root " + e.root + " --cache '" + e.cache + "' --repo repo=LOCATION run --lock " + lock + " tool'",
	} {
		if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "check --repo") {
			t.Errorf("run --lock with the repository moved: exit %d, %q; want %q", code, stderr, want)
		}
	}
	if out, stderr, code := e.exec("--repo", "repo="+moved, "run", "--lock", lock, "tool"); out != "tool 1\n" || code != 0 {
		t.Errorf("run --lock as the hint says: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestRunLockMovedHTTP runs a lockfile whose repository, over HTTP, moved: the archive's
// 404 is advised, as a sync's is, the run with --repo naming where it is now (a run of a
// lockfile reads no index to tell that the repository, not the archive, is gone) and the
// lock again, which that run then takes.
func TestRunLockMovedHTTP(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo tool 1"})
	srv, moved := movingServer(t, filepath.Join(base, "repo"))
	e.repo = srv.URL + "/old/"
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	moved.Store(true)
	e.repo = ""
	_, stderr, code := e.exec("run", "--lock", lock, "tool")
	for _, want := range []string{
		"--repo LOCATION run --lock " + lock + " tool' (the archives must match the lockfile's sha256)",
		" lock -o " + lock + "' locks the requirements again",
	} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("run --lock from a repository that moved: exit %d, %q; want a hint with %q", code, stderr, want)
		}
	}
	if out, stderr, code := e.exec("--repo", srv.URL+"/new/", "run", "--lock", lock, "tool"); out != "tool 1\n" || code != 0 {
		t.Errorf("run --lock as the hint says: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestRunLockRepos runs with --lock and no --repo, as pkg sync -f takes a lockfile: the
// packages come from the repositories the lockfile records, for a lock of a repository of
// scripts and for one that repo add --from wrote of a package-lock.json.
func TestRunLockRepos(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("tool", "1", map[string]string{"tool": "echo tool 1"})
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	if out, stderr, code := e.exec("run", "--lock", lock, "tool"); out != "tool 1\n" || code != 0 {
		t.Errorf("run --lock without --repo: exit %d, stdout %q, stderr %q; want tool 1 from the lockfile's repository", code, out, stderr)
	}

	npm := filepath.Join(base, "npm")
	cli := gzipped(t, pax(t, tf("package/package.json", `{"name": "cli", "version": "1.0.0", "bin": "cli.js"}`),
		tf("package/cli.js", "#!/bin/sh\necho cli 1.0.0\n")))
	os.MkdirAll(filepath.Join(npm, "served"), 0o755)
	if err := os.WriteFile(filepath.Join(npm, "served", "cli-1.0.0.tgz"), cli, 0o644); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(npm, "project", "package-lock.json")
	os.MkdirAll(filepath.Dir(project), 0o755)
	data, _ := json.Marshal(map[string]any{"name": "project", "lockfileVersion": 3, "packages": map[string]any{
		"":                 map[string]any{"name": "project", "dependencies": map[string]string{"cli": "^1.0.0"}},
		"node_modules/cli": map[string]any{"version": "1.0.0", "resolved": serve(t, filepath.Join(npm, "served")) + "/cli-1.0.0.tgz", "integrity": sriOf(cli)},
	}})
	if err := os.WriteFile(project, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", filepath.Join(npm, "repo"), "--from", project, "--npm-cache", filepath.Join(npm, "cache"))
	if out, stderr, code := e.exec("run", "--lock", filepath.Join(filepath.Dir(project), "pkg.lock"), "cli"); out != "cli 1.0.0\n" || code != 0 {
		t.Errorf("run --lock of an imported npm lock without --repo: exit %d, stdout %q, stderr %q; want cli 1.0.0 from the lockfile's repository", code, out, stderr)
	}
}

// TestRunArgs runs a command that prints its arguments: what follows NAME is the
// command's, flags that are pkg's or pkg run's included, after an optional "--"; pkg's
// own flags for run come before NAME.
func TestRunArgs(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	e.publishScript("args", "1", map[string]string{"args": `for a; do echo "[$a]"; done; exit 7`})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"args", "-e", "process.exit(7)"}, "[-e]\n[process.exit(7)]\n"},
		{[]string{"args", "--version"}, "[--version]\n"},
		{[]string{"args", "-v"}, "[-v]\n"},
		{[]string{"args", "--help"}, "[--help]\n"},
		{[]string{"args", "-h", "x"}, "[-h]\n[x]\n"},
		{[]string{"args", "argv.js", "-q", "--offline", "a"}, "[argv.js]\n[-q]\n[--offline]\n[a]\n"},
		{[]string{"args", "argv.js", "--root", "/x", "a"}, "[argv.js]\n[--root]\n[/x]\n[a]\n"},
		{[]string{"args", "--cmd", "other", "--with", "x", "--refresh"}, "[--cmd]\n[other]\n[--with]\n[x]\n[--refresh]\n"},
		{[]string{"args", "--root"}, "[--root]\n"},
		{[]string{"args", "--", "-e", "x"}, "[-e]\n[x]\n"},
		{[]string{"args", "--", "--", "x"}, "[--]\n[x]\n"},
		{[]string{"args", "a", "--", "b"}, "[a]\n[--]\n[b]\n"},
		{[]string{"--refresh", "-q", "--cmd", "args", "args", "-q"}, "[-q]\n"},
		{[]string{"--", "args", "-q"}, "[-q]\n"},
	} {
		out, stderr, code := e.run(tt.args...)
		if out != tt.want || code != 7 {
			t.Errorf("run %q: exit %d, stdout %q, stderr %q; want exit 7, %q", tt.args, code, out, stderr, tt.want)
		}
	}
	if out, stderr, code := e.exec("-q", "--repo", e.repo, "run", "args", "x", "--jobs", "2"); out != "[x]\n[--jobs]\n[2]\n" || code != 7 || stderr != "" {
		t.Errorf("pkg -q run args x --jobs 2: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if out, stderr, code := e.run("--bogus", "args"); code != 2 || out != "" || !strings.Contains(stderr, "unknown flag --bogus") {
		t.Errorf("run --bogus args: exit %d, stdout %q, stderr %q; want a usage error", code, out, stderr)
	}
}

// TestRunCompletion completes after "pkg run NAME --", the word begun and a word of its
// own, through the bash script: the package's command does not run, and past NAME, where
// pkg's flags end, run's flags are not offered, as they would be the command's.
func TestRunCompletion(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	ran := filepath.Join(base, "ran")
	e.publishScript("mark", "1", map[string]string{"mark": "echo \"$@\" >> " + ran})
	complete := bashCompleter(t, e.env)
	global := "pkg --root " + e.root + " --cache " + e.cache + " --repo " + e.repo + " "
	for _, tt := range []struct{ words, want string }{
		{global + "run --", "--with\n--cmd\n--lock\n--refresh\n--help\n"},
		{global + "run --cmd mark --", "--with\n--lock\n--refresh\n--help\n"},
		{global + "run mark --", "\n"},
		{global + "run mark --w", "\n"},
		{global + "run --cmd mark mark --re", "\n"},
		{global + "run --refresh mark -", "\n"},
		{global + "run mark -- ", "\n"}, // the command's arguments: bash's -o default completes file names
		{global + "run mark -- x ", "\n"},
	} {
		if got := complete(tt.words); got != tt.want {
			t.Errorf("completing %q: %q; want %q", tt.words, got, tt.want)
		}
	}
	if b, err := os.ReadFile(ran); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("completing ran the command: %q, %v", b, err)
	}
}

// TestRunScriptPath runs a #! script that finds its files from dirname "$0" and names
// itself by basename "$0", as it does installed: $0 is the command's path in the run
// root, and the only descriptor of pkg's it inherits is the run root's hold, <set>.used.
func TestRunScriptPath(t *testing.T) {
	base := t.TempDir()
	e := newRunEnv(t, base)
	script := tf("bin/flatsh", "#!/bin/sh\n"+`HOME_DIR=$(cd "$(dirname "$0")/.." && pwd); echo "$(basename "$0"): home=$HOME_DIR"; cat "$HOME_DIR/share/flat/msg"`+
		"\necho fds; ls -l /proc/self/fd/ | sed -n 's/.* \\([0-9]*\\) -> \\(.*\\)/\\1 \\2/p'\n")
	script.hdr.Mode = 0o755
	addHostile(t, base, repo.Package{Name: "flatsh", Version: "1.0", Bin: []repo.Command{{Name: "flatsh", Path: "bin/flatsh"}}},
		pax(t, td("bin/"), script, td("share/"), td("share/flat/"), tf("share/flat/msg", "hello\n")))
	e.ok("install", "-q", "flatsh")
	installed, err := exec.Command(filepath.Join(e.root, "bin", "flatsh")).Output()
	if err != nil {
		t.Fatal(err)
	}
	inst, _, _ := strings.Cut(string(installed), "fds\n")
	if want := "flatsh: home=" + e.root + "\nhello\n"; inst != want {
		t.Fatalf("installed flatsh: %q, want %q", inst, want)
	}
	for _, args := range [][]string{{"flatsh"}, {"flatsh"}, {"--refresh", "flatsh"}} { // made, reused by its memo, resolved again
		out, stderr, code := e.run(args...)
		roots := e.runRoots()
		if len(roots) != 1 {
			t.Fatalf("run roots: %q", roots)
		}
		got, fds, _ := strings.Cut(out, "fds\n")
		if want := "flatsh: home=" + roots[0] + "\nhello\n"; got != want || code != 0 {
			t.Errorf("run %q: exit %d, stdout %q, stderr %q; want %q, as installed", args, code, got, stderr, want)
		}
		var extra []string
		for _, l := range strings.Split(strings.TrimSpace(fds), "\n") {
			fd, target, _ := strings.Cut(l, " ")
			if strings.HasPrefix(target, e.cache) { // what pkg opened; the test's own are passed on too
				extra = append(extra, fd+" "+target)
			}
		}
		if len(extra) != 1 || !strings.HasSuffix(extra[0], " "+roots[0]+".used") {
			t.Errorf("run %q: the command inherits %q of the cache, want only %s.used", args, extra, roots[0])
		}
	}
}

// TestRunLockPinnedSince runs a lockfile made without the key of a signed repository,
// then pins the repository in the user's root: the next run of the lockfile is refused as
// a sync of it is, though the lockfile, and the run's memo, are unchanged.
func TestRunLockPinnedSince(t *testing.T) {
	r := newSignedRepo(t)
	u, trusted := r.user()
	e := &runEnv{env: u, bin: testfs.PkgBinary(t), base: t.TempDir()}
	unsigned := filepath.Join(t.TempDir(), "pkg.lock")
	e.ok("--cache", t.TempDir(), "lock", "-o", unsigned, "hello")
	e.ok("install", "fortunes") // a root, pinning nothing
	// Made, then reused.
	for range 2 {
		if out, stderr, code := e.exec("run", "--lock", unsigned, "hello"); code != 0 || out != "Hello, world!\n" {
			t.Fatalf("run --lock before the root pinned the repository: exit %d, %q, %q", code, out, stderr)
		}
	}
	e.ok(append(trusted, "install", "libgreet")...) // pins the repository to its key
	want := unsigned + " does not say it was made from a verified index, and root " + e.root + " pinned repository demo"
	if _, stderr, code := e.pkg("sync", "-n", "-f", unsigned); code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("sync of the lockfile: exit %d, %q; want %q", code, stderr, want)
	}
	if out, stderr, code := e.exec("run", "--lock", unsigned, "hello"); code != 1 || out != "" || !strings.Contains(stderr, want) {
		t.Errorf("run --lock once the root pinned the repository: exit %d, stdout %q, stderr %q; want it refused as sync refuses it", code, out, stderr)
	}
}
