package session_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pkg/config"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/session"
)

// TestPruneAcrossRoots prunes a cache two roots install from: what either root uses is
// kept, until the other root is gone, which the prune forgets.
func TestPruneAcrossRoots(t *testing.T) {
	w := newRoots(t)
	hello := w.add("hello", "1")
	tool := w.add("tool", "1")
	old := w.add("old", "1")
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	w.install(a, "hello", "old")
	w.install(b, "tool")

	used, forgot, err := session.UsedArchives(w.cache, a, install.Options{}, nil)
	if err != nil || len(forgot) != 0 || !used[hello.SHA256] || !used[tool.SHA256] || !used[old.SHA256] {
		t.Fatalf("usedArchives with both roots: %v, forgot %v, %v; want hello, tool and old", used, forgot, err)
	}
	if err := w.cache.Exclusive(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	t0, _, err := session.PruneCache(w.cache, a, install.Options{}, fetch.Limits{})
	if err != nil || len(t0.Removed) != 0 {
		t.Errorf("pruneCache with both roots: removed %v, %v; want none", t0.Removed, err)
	}
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	t1, forgot, err := session.PruneCache(w.cache, a, install.Options{}, fetch.Limits{})
	if removed := t1.Removed; err != nil || len(removed) != 1 || removed[0].SHA256 != tool.SHA256 || !slices.Equal(forgot, []string{b}) {
		t.Errorf("pruneCache once root b is gone: removed %v, forgot %v, %v; want tool, and b forgotten", t1.Removed, forgot, err)
	}
	if roots, err := w.cache.Roots(); err != nil || !slices.Equal(roots, []string{a}) {
		t.Errorf("roots after: %v, %v; want only %s", roots, err, a)
	}
}

// TestPruneUnreadableRoot: a root the cache records that cannot be read stops the prune.
func TestPruneUnreadableRoot(t *testing.T) {
	w := newRoots(t)
	w.add("hello", "1")
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	w.install(a, "hello")
	w.install(b, "hello")
	if err := os.WriteFile(filepath.Join(b, ".pkg", "db"), []byte("not a database, but long enough to be one"+string(make([]byte, 20000))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := session.UsedArchives(w.cache, a, install.Options{}, nil); err == nil {
		t.Errorf("usedArchives with an unreadable root: no error")
	}
}

// TestAutoPrune: an automatic prune does nothing without limits, starts counting on a cache
// never pruned, waits a day between prunes, skips a cache another command uses, and, when
// due, removes what the limits let go but what a root uses.
func TestAutoPrune(t *testing.T) {
	w := newRoots(t)
	hello := w.add("hello", "1")
	old := w.add("old", "1")
	recent := w.add("recent", "1")
	base := t.TempDir()
	a, gone := filepath.Join(base, "a"), filepath.Join(base, "gone")
	w.install(a, "hello")
	w.install(gone, "old", "recent", "hello")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{hello.SHA256, old.SHA256} {
		was := time.Now().Add(-40 * 24 * time.Hour)
		if err := os.Chtimes(w.cache.Path(sha), was, was); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Dir(filepath.Dir(w.cache.RootFile("/"))) // the cache's
	age := func(d time.Duration) {                           // the last prune, as <cache>/last-prune records it
		was := time.Now().Add(-d)
		if err := os.Chtimes(filepath.Join(dir, "last-prune"), was, was); err != nil {
			t.Fatal(err)
		}
	}
	month := fetch.Limits{OlderThan: 30 * 24 * time.Hour}
	step := func(what string, l fetch.Limits, wantDone bool, wantRemoved ...string) {
		t.Helper()
		got, _, done, err := session.AutoPruneCache(w.cache, a, install.Options{}, l)
		var names []string
		for _, e := range got.Removed {
			names = append(names, e.Name)
		}
		if err != nil || done != wantDone || !slices.Equal(names, wantRemoved) {
			t.Errorf("autoPruneCache %s: done %v, removed %v, %v; want done %v, removed %v", what, done, names, err, wantDone, wantRemoved)
		}
	}

	step("without limits", fetch.Limits{}, false)
	if last, err := w.cache.LastPruned(); err != nil || !last.IsZero() {
		t.Errorf("LastPruned after autoPruneCache without limits: %v, %v; want none", last, err)
	}
	step("on a cache never pruned", month, false)
	step("pruned just now", month, false)

	age(2 * session.AutoEvery)
	other, err := fetch.OpenCache(context.Background(), dir) // another command's
	if err != nil {
		t.Fatal(err)
	}
	step("while another command uses the cache", month, false)
	other.Close()
	step("due", month, true, "old")
	step("once pruned", month, false)
	if !w.cache.Has(hello.SHA256) || !w.cache.Has(recent.SHA256) || w.cache.Has(old.SHA256) {
		t.Errorf("after autoPruneCache: hello %v, recent %v, old %v cached; want hello and recent",
			w.cache.Has(hello.SHA256), w.cache.Has(recent.SHA256), w.cache.Has(old.SHA256))
	}
}

// TestPruneFetched: a prune removes from a cache no other process uses what no root
// installing from it uses, within the limits (none: all of it), such as an archive
// fetched and never installed.
func TestPruneFetched(t *testing.T) {
	w := newRoots(t)
	hello := w.add("hello", "1")
	old := w.add("old", "1")
	dir := filepath.Join(t.TempDir(), "root")
	w.fetch(dir, "old") // cached, not installed
	w.install(dir, "hello")
	if err := w.cache.Exclusive(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	got, forgot, err := session.PruneCache(w.cache, dir, install.Options{}, fetch.Limits{})
	if err != nil || len(got.Removed) != 1 || got.Removed[0].SHA256 != old.SHA256 || len(forgot) != 0 || !w.cache.Has(hello.SHA256) {
		t.Errorf("pruneCache: removed %v, forgot %v, %v; hello kept: %v; want old alone removed, no root forgotten", got.Removed, forgot, err, w.cache.Has(hello.SHA256))
	}
}

// roots is a repository and a cache that roots install from.
type roots struct {
	t         *testing.T
	repo, dir string // the repository's directory, the cache's
	cache     *fetch.Cache
}

func newRoots(t *testing.T) *roots {
	t.Helper()
	base := t.TempDir()
	w := &roots{t: t, repo: filepath.Join(base, "repo"), dir: filepath.Join(base, "cache")}
	cache, err := fetch.OpenCache(t.Context(), w.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	w.cache = cache
	return w
}

// add publishes a package of one command in the repository.
func (w *roots) add(name, version string) repo.Package {
	w.t.Helper()
	return publish(w.t, w.repo, name, version)
}

func (w *roots) options(dir string) session.Options {
	return session.Options{Root: dir, Cache: w.dir, Repos: []config.Repo{{Name: "r", URLs: []string{w.repo}}}}
}

// install installs reqs into the root at dir from the repository, through the cache.
func (w *roots) install(dir string, reqs ...string) {
	w.t.Helper()
	if _, err := installWith(w.t, w.options(dir), reqs...); err != nil {
		w.t.Fatal(err)
	}
}

// fetch fetches names into the cache, for the root at dir.
func (w *roots) fetch(dir string, names ...string) {
	w.t.Helper()
	s, _ := newSession(w.t, w.options(dir), "")
	defer s.Close()
	var reqs []repo.Requirement
	for _, n := range names {
		reqs = append(reqs, repo.Requirement{Name: n})
	}
	if err := s.Fetch(w.t.Context(), reqs); err != nil {
		w.t.Fatal(err)
	}
}
