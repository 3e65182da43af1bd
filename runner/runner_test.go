package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/fetch"
	"pkg/install"
	"pkg/internal/testfs"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/txn"
)

func TestPick(t *testing.T) {
	tool := repo.Package{Name: "tool", Version: "1", Bin: testrepo.Commands("bin/tool")}
	multi := repo.Package{Name: "multi", Version: "2", Bin: testrepo.Commands("bin/b", "bin/a")}
	named := repo.Package{Name: "b", Version: "1", Bin: testrepo.Commands("bin/b", "x=bin/a")}
	none := repo.Package{Name: "data", Version: "1"}
	for _, c := range []struct {
		p     repo.Package
		all   []repo.Package
		asked string
		want  string
		err   *CommandError
	}{
		{tool, nil, "", "tool", nil},
		{named, nil, "", "b", nil},
		{named, nil, "x", "x", nil},
		{multi, nil, "a", "a", nil},
		{tool, []repo.Package{tool, multi}, "b", "b", nil},
		{multi, nil, "", "", &CommandError{Package: "multi", Version: "2", Commands: []string{"a", "b"}}},
		{tool, []repo.Package{tool, multi}, "c", "", &CommandError{Package: "tool", Version: "1", Asked: "c", Commands: []string{"tool"}, Others: []string{"a", "b"}}},
		{none, nil, "", "", &CommandError{Package: "data", Version: "1"}},
		{none, nil, "x", "", &CommandError{Package: "data", Version: "1", Asked: "x"}},
	} {
		got, err := Pick(c.p, c.all, c.asked)
		var ce *CommandError
		if got != c.want || (c.err == nil) != (err == nil) || err != nil && (!errors.As(err, &ce) || !reflect.DeepEqual(ce, c.err)) {
			t.Errorf("Pick(%s, %q) = %q, %#v; want %q, %#v", c.p.Name, c.asked, got, err, c.want, c.err)
		}
	}
}

// TestCommandErrorText checks the words of a *CommandError, which pkg run prints.
func TestCommandErrorText(t *testing.T) {
	for _, c := range []struct {
		e    CommandError
		want string
	}{
		{CommandError{Package: "multi", Version: "2", Commands: []string{"a", "b"}}, "run multi 2: the package has several commands, none named multi: a, b"},
		{CommandError{Package: "tool", Version: "1", Asked: "c", Commands: []string{"tool"}, Others: []string{"a", "b"}}, `run tool 1: no command "c": it has tool, a, b`},
		{CommandError{Package: "data", Version: "1"}, "run data 1: the package has no commands"},
		{CommandError{Package: "data", Version: "1", Others: []string{"a", "b"}}, "run data 1: the package has no commands; the run's other packages have a, b"},
		{CommandError{Package: "data", Version: "1", Asked: "x"}, `run data 1: no command "x": it has no commands`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// publish adds name at version, whose one command prints "name version", to the
// repository in dir.
func publish(t *testing.T, dir, name, version string) {
	t.Helper()
	if _, err := testrepo.Publish(dir, t.TempDir(), name, version); err != nil {
		t.Fatal(err)
	}
}

// world is a repository, a cache, and a user's root that stays empty.
type world struct {
	t                       *testing.T
	repo, cacheDir, userDir string
}

func newWorld(t *testing.T) *world {
	base := t.TempDir()
	return &world{t: t, repo: filepath.Join(base, "repo"), cacheDir: filepath.Join(base, "cache"), userDir: filepath.Join(base, "root")}
}

// make runs the cold path of a run of name from location, as pkg run does.
func (w *world) make(location, name string) *Run {
	w.t.Helper()
	ctx := context.Background()
	req := Request{Repos: []RepoRef{{Location: location}}, Package: repo.Requirement{Name: name}, Root: w.userDir}
	watched := Watch(w.cacheDir, req)
	cache, err := fetch.OpenCache(context.Background(), w.cacheDir)
	if err != nil {
		w.t.Fatal(err)
	}
	defer cache.Close()
	ix, err := txn.ReadIndex(ctx, cache, w.userDir, install.Options{}, location, fetch.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	f := &txn.Fetcher{Source: ix.Source, Jobs: 1, Cache: cache}
	r, err := Make(ctx, f, ix, req, watched, install.Options{NoSync: true})
	if err != nil {
		w.t.Fatal(err)
	}
	if r.NoMemo != nil {
		w.t.Errorf("memo: %v", r.NoMemo)
	}
	r.Close()
	return r
}

// reuse reports where the warm path of a run of name would run it from, "" for nowhere.
func (w *world) reuse(location, name string, offline bool) string {
	r, ok := Reuse(context.Background(), w.cacheDir, Request{Repos: []RepoRef{{Location: location}}, Package: repo.Requirement{Name: name}, Root: w.userDir}, offline)
	if !ok {
		return ""
	}
	r.Close()
	return r.Root
}

func ino(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestMakeReuse makes a run root, reuses it (by its memo, and by resolving again), and
// makes another once a new version is published to the local repository.
func TestMakeReuse(t *testing.T) {
	w := newWorld(t)
	publish(t, w.repo, "tool", "1")
	if got := w.reuse(w.repo, "tool", false); got != "" {
		t.Fatalf("Reuse before any run: %s", got)
	}
	first := w.make(w.repo, "tool")
	if first.Outcome == nil || len(first.Outcome.Results) != 1 || first.Command != "tool" || first.Package.Version != "1" {
		t.Fatalf("first Make: %+v", first)
	}
	tree := ino(t, filepath.Join(first.Root, "pkgs", "tool"))
	if got := w.reuse(w.repo, "tool", false); got != first.Root {
		t.Errorf("Reuse after the first run: %q, want %s", got, first.Root)
	}
	again := w.make(w.repo, "tool")
	if again.Outcome != nil || again.Root != first.Root || ino(t, filepath.Join(first.Root, "pkgs", "tool")) != tree {
		t.Errorf("Make of the same set: root %s, outcome %+v; want %s as it was", again.Root, again.Outcome, first.Root)
	}
	if _, err := os.Stat(w.userDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the user's root after runs: %v; want none made", err)
	}

	publish(t, w.repo, "tool", "2")
	if got := w.reuse(w.repo, "tool", false); got != "" {
		t.Errorf("Reuse once tool 2 is published: %s; want none", got)
	}
	second := w.make(w.repo, "tool")
	if second.Root == first.Root || second.Package.Version != "2" || second.Outcome == nil {
		t.Errorf("Make once tool 2 is published: %+v", second)
	}
	if got := w.reuse(w.repo, "tool", false); got != second.Root {
		t.Errorf("Reuse after it: %q, want %s", got, second.Root)
	}
}

// TestReuseRemote reuses a run from a remote repository for MaxAge after the index was
// last read, however the repository changed meanwhile; offline, past it too.
func TestReuseRemote(t *testing.T) {
	w := newWorld(t)
	publish(t, w.repo, "tool", "1")
	srv := httptest.NewServer(http.FileServer(http.Dir(w.repo)))
	defer srv.Close()
	r := w.make(srv.URL, "tool")
	publish(t, w.repo, "tool", "2")
	// http.FileServer's Last-Modified is to the second: a conditional read must see it change.
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(w.repo, "index.json"), later, later); err != nil {
		t.Fatal(err)
	}
	if got := w.reuse(srv.URL, "tool", false); got != r.Root {
		t.Errorf("Reuse within MaxAge: %q, want %s", got, r.Root)
	}
	paths, _ := fetch.IndexFiles(w.cacheDir, source(t, srv.URL))
	old := time.Now().Add(-MaxAge - time.Minute)
	if err := os.Chtimes(paths[0], old, old); err != nil {
		t.Fatal(err)
	}
	// The memo holds what the copy was: touched since, it no longer matches; remade with
	// the old time, it matches, and the copy is too old.
	w.rememberAs(srv.URL, r)
	if got := w.reuse(srv.URL, "tool", false); got != "" {
		t.Errorf("Reuse past MaxAge: %q, want none", got)
	}
	if got := w.reuse(srv.URL, "tool", true); got != r.Root {
		t.Errorf("Reuse offline past MaxAge: %q, want %s", got, r.Root)
	}
	if second := w.make(srv.URL, "tool"); second.Package.Version != "2" {
		t.Errorf("Make past MaxAge: %+v, want tool 2", second)
	}
}

func source(t *testing.T, location string) *fetch.Source {
	s, err := fetch.NewSource(location, fetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rememberAs writes the memo of a run of r's package from location, watching the files as
// they are now.
func (w *world) rememberAs(location string, r *Run) {
	w.t.Helper()
	req := Request{Repos: []RepoRef{{Location: location}}, Package: repo.Requirement{Name: r.Package.Name}, Root: w.userDir}
	runs, err := fetch.OpenRunDir(w.cacheDir)
	if err != nil {
		w.t.Fatal(err)
	}
	defer runs.Close()
	if err := Watch(w.cacheDir, req).remember(runs, req, r, time.Time{}); err != nil {
		w.t.Fatal(err)
	}
}

// TestGiveHeldUsed: run as root with a cache of another user's, Make hands the cache's
// owner the .used file it holds, not the file a name replaced since holds: the file held
// stays in the cache under its new name and is the owner's to remove.
func TestGiveHeldUsed(t *testing.T) {
	if os.Geteuid() != 0 {
		testfs.Unavailable(t, "needs root, to hand a file to another user")
	}
	w := newWorld(t)
	publish(t, w.repo, "tool", "1")
	if err := os.Mkdir(w.cacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(w.cacheDir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	var moved string
	defer func(was func(*os.File, string)) { afterHold = was }(afterHold)
	afterHold = func(runs *os.File, name string) { // as the cache's owner may, meanwhile
		path := filepath.Join(runs.Name(), name)
		moved = path + ".moved"
		if err := os.Rename(path, moved); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	w.make(w.repo, "tool")
	var st unix.Stat_t
	if err := unix.Lstat(moved, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("the .used file Make held, renamed: %d:%d's, want the cache owner's, 65534:65534", st.Uid, st.Gid)
	}
}

// TestReuseMemoFIFO: a FIFO in a memo's place, held open by a writer that writes nothing,
// is no memo: Reuse does not wait on it.
func TestReuseMemoFIFO(t *testing.T) {
	w := newWorld(t)
	publish(t, w.repo, "tool", "1")
	w.make(w.repo, "tool")
	key, err := requestKey(Request{Repos: []RepoRef{{Location: w.repo}}, Package: repo.Requirement{Name: "tool"}, Root: w.userDir})
	if err != nil {
		t.Fatal(err)
	}
	memo := filepath.Join(w.cacheDir, "run", "memo", key+".json")
	if err := os.Remove(memo); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(memo, 0o644); err != nil {
		t.Fatal(err)
	}
	writer, err := os.OpenFile(memo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	got := make(chan string, 1)
	go func() { got <- w.reuse(w.repo, "tool", false) }()
	select {
	case root := <-got:
		if root != "" {
			t.Errorf("Reuse with a FIFO for its memo: %s, want none", root)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Reuse with a FIFO for its memo still waiting on it after 10 s")
	}
}

// TestHoldLinked: hold takes a .used file with another link, which the owner of a cache
// root runs from may link in from a file of root's, and leaves its times as they were;
// one of a single link it touches.
func TestHoldLinked(t *testing.T) {
	runs := t.TempDir()
	outside := filepath.Join(t.TempDir(), "root's")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := errors.Join(os.Chtimes(outside, old, old), os.WriteFile(filepath.Join(runs, "own.used"), nil, 0o644),
		os.Chtimes(filepath.Join(runs, "own.used"), old, old), os.Link(outside, filepath.Join(runs, "set.used"))); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, create := range []bool{true, false} {
		for _, name := range []string{"set.used", "own.used"} {
			f, err := hold(context.Background(), d, name, create)
			if err != nil || f == nil {
				t.Fatalf("hold of %s, create %t: %v, %v", name, create, f, err)
			}
			f.Close()
		}
	}
	if info, err := os.Stat(filepath.Join(runs, "own.used")); err != nil || !info.ModTime().After(old) {
		t.Errorf("a .used file of one link after hold: %v, %v; want touched", info.ModTime(), err)
	}
	if info, err := os.Stat(outside); err != nil || !info.ModTime().Equal(old) {
		t.Errorf("the linked file after hold: %v, %v; want untouched, %v", info.ModTime(), err, old)
	}
}

// TestMovedCache runs a command whose wrapper names its run root, then moves the cache, as
// a CI job restores it at another path: the run root is neither reused by its memo nor as
// it is by a new resolution, whose wrapper would exec the old path, but its wrapper names
// it where it is now.
func TestMovedCache(t *testing.T) {
	w := newWorld(t)
	tmp := t.TempDir()
	data := []byte("#!/bin/sh\necho tool\n")
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/tool", Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(1700000000, 0)})
	tw.Write(data)
	tw.Close()
	archive := filepath.Join(tmp, "tool-1.tar")
	if err := os.WriteFile(archive, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := repo.Package{Name: "tool", Version: "1", Bin: testrepo.Commands("bin/tool"), Env: []string{"TOOL_HOME={root}"}}
	if _, err := repo.Add(context.Background(), w.repo, archive, p, false, nil); err != nil {
		t.Fatal(err)
	}
	first := w.make(w.repo, "tool")
	moved := w.cacheDir + "-moved"
	if err := os.Rename(w.cacheDir, moved); err != nil {
		t.Fatal(err)
	}
	w.cacheDir = moved
	if got := w.reuse(w.repo, "tool", true); got != "" {
		t.Errorf("Reuse of a run root made at %s, now in %s: %s; want none", first.Root, moved, got)
	}
	again := w.make(w.repo, "tool")
	wrapper, err := os.ReadFile(filepath.Join(again.Root, "bin", "tool"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(again.Root, moved) || strings.Contains(string(wrapper), first.Root) || !strings.Contains(string(wrapper), again.Root) {
		t.Errorf("wrapper of the run root %s after the cache moved:\n%s", again.Root, wrapper)
	}
	if got := w.reuse(w.repo, "tool", true); got != again.Root {
		t.Errorf("Reuse once made again: %q, want %s", got, again.Root)
	}
}
