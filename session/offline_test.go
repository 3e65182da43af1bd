package session_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/config"
	"pkg/repo"
	"pkg/session"
	"pkg/txn"
)

// served publishes hello 1 (needing lib), lib 1 and tool 1 into a repository served over
// HTTP, and returns the options of a session of a root and cache under base using it, and
// the server.
func served(t *testing.T, base string) (session.Options, *httptest.Server) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	for _, p := range [][]string{{"lib", "1"}, {"hello", "1", "lib"}, {"tool", "1"}} {
		publish(t, dir, p[0], p[1], p[2:]...)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"),
		Repos: []config.Repo{{Name: "r", URLs: []string{srv.URL}}}, Jobs: 2}, srv
}

// missing returns "NAME VERSION" of each package a *txn.NotCachedError in err names, or
// nil if there is none.
func missing(err error) []string {
	var nc *txn.NotCachedError
	if !errors.As(err, &nc) {
		return nil
	}
	var out []string
	for _, m := range nc.Missing {
		out = append(out, m.Package.Name+" "+m.Package.Version)
	}
	return out
}

// TestOffline installs from the cache with the server stopped, saying how old the index
// it uses is, and refuses an install of what the cache lacks, naming every package
// missing, and changing nothing.
func TestOffline(t *testing.T) {
	base := t.TempDir()
	o, srv := served(t, base)
	s, _ := newSession(t, o, "")
	if err := s.Fetch(t.Context(), []repo.Requirement{{Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	bare := o // keeps the index only
	bare.Root, bare.Cache = filepath.Join(base, "bare", "root"), filepath.Join(base, "bare", "cache")
	s, _ = newSession(t, bare, "")
	if _, _, err := session.OpenFetcher(s, t.Context(), false); err != nil {
		t.Fatal(err)
	}
	s.Close()
	srv.Close()

	o.Offline, bare.Offline = true, true
	obs, err := installWith(t, o, "hello")
	if err != nil || !slices.ContainsFunc(obs.lines, func(l string) bool {
		return strings.HasPrefix(l, "note: offline: using the index of "+srv.URL+"/ as last read ")
	}) {
		t.Errorf("offline install: %v, told %q; want a note of the index's age", err, obs.lines)
	}
	was := stateOf(t, o)
	if _, err := installWith(t, o, "tool"); !slices.Equal(missing(err), []string{"tool 1"}) {
		t.Errorf("offline install of an uncached package: %v; want tool 1 missing", err)
	}
	was.same(t, stateOf(t, o))
	if _, err := installWith(t, bare, "hello"); !slices.Equal(missing(err), []string{"lib 1", "hello 1"}) {
		t.Errorf("offline install with nothing cached: %v; want lib 1 and hello 1 missing", err)
	}
	if db := stateOf(t, bare).db; db != "" && db != "intents [];" {
		t.Errorf("the refused install recorded %s", db)
	}
}

// TestSyncOffline syncs one root to a lockfile online, stops the server, and syncs a
// second root sharing the cache: it needs no network; a lockfile of a package the cache
// lacks is refused, naming it.
func TestSyncOffline(t *testing.T) {
	base := t.TempDir()
	o, srv := served(t, base)
	l, err := lockWith(t, o, nil, "hello", "tool")
	if err != nil {
		t.Fatal(err)
	}
	extra, err := lockWith(t, o, nil, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if err := syncWith(t, o, l); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	second := o
	second.Root, second.Offline = filepath.Join(base, "second"), true
	if err := syncWith(t, second, l); err != nil {
		t.Errorf("offline sync from the shared cache: %v", err)
	}
	if db := stateOf(t, second).db; !strings.Contains(db, " hello 1 ") || !strings.Contains(db, " lib 1 ") || !strings.Contains(db, " tool 1 ") {
		t.Errorf("after the offline sync: %s", db)
	}

	// A root with a cache of its own, empty: a sync reads no index, and finds nothing cached.
	third := second
	third.Root, third.Cache = filepath.Join(base, "third"), filepath.Join(base, "third-cache")
	if err := syncWith(t, third, extra); !slices.Equal(missing(err), []string{"lib 1", "hello 1"}) {
		t.Errorf("offline sync of uncached packages: %v; want lib 1 and hello 1 missing", err)
	}
	var nc *txn.NotCachedError
	if errors.As(err, &nc) && !nc.Missing[0].ByLock {
		t.Errorf("the sync's missing packages are not by the lockfile: %+v", nc.Missing)
	}
}

// TestSyncOfflineRepoGone syncs offline, into a new root, a lockfile of a directory
// repository moved away, the cache holding only some of its archives: refused, naming
// each package the cache lacks, not the repository it cannot reach (offline reads none).
func TestSyncOfflineRepoGone(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, p := range [][]string{{"lib", "1"}, {"hello", "1", "lib"}, {"tool", "1"}} {
		publish(t, dir, p[0], p[1], p[2:]...)
	}
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"),
		Repos: []config.Repo{{Name: "r", URLs: []string{dir}}}, Jobs: 2}
	l, err := lockWith(t, o, nil, "hello", "tool")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, o, "")
	err = s.Fetch(t.Context(), []repo.Requirement{{Name: "lib"}})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".gone"); err != nil {
		t.Fatal(err)
	}
	o.Root, o.Offline = filepath.Join(base, "new"), true
	err = syncWith(t, o, l)
	if got := missing(err); !slices.Equal(got, []string{"hello 1", "tool 1"}) || errors.Is(err, session.ErrNoRepository) {
		t.Errorf("offline sync, repository gone, some archives cached: %v; want hello 1 and tool 1 missing", err)
	}
}

// syncWith syncs the root of a new session of o to l, as pkg sync does.
func syncWith(t *testing.T, o session.Options, l *repo.Lock) error {
	t.Helper()
	s, _ := newSession(t, o, "")
	defer s.Close()
	p, err := s.Plan(t.Context(), session.Request{Op: session.Sync, Lock: l, LockPath: "pkg.lock"})
	if err != nil {
		return err
	}
	_, err = p.Apply(t.Context())
	return err
}

// TestReinstallOfflineNoRepo reinstalls, offline with no repository in effect, a package
// the cache holds: the record names its archive, so no index is needed. Online, or with
// the archive gone from the cache, it is refused: for want of a repository, or naming
// the package missing.
func TestReinstallOfflineNoRepo(t *testing.T) {
	_, o := installed(t, "hello")
	o.Repos = nil
	reinstall := func(o session.Options) error {
		s, _ := newSession(t, o, "")
		defer s.Close()
		p, err := s.Plan(t.Context(), session.Request{Op: session.Reinstall, Names: []string{"hello"}})
		if err != nil {
			return err
		}
		_, err = p.Apply(t.Context())
		return err
	}
	if err := reinstall(o); !errors.Is(err, session.ErrNoRepo) {
		t.Errorf("reinstall online with no repository: %v; want ErrNoRepo", err)
	}
	o.Offline = true
	if err := reinstall(o); err != nil {
		t.Errorf("offline reinstall with no repository: %v", err)
	}
	empty := o
	empty.Cache = filepath.Join(t.TempDir(), "cache")
	if err := reinstall(empty); !slices.Equal(missing(err), []string{"hello 1"}) {
		t.Errorf("offline reinstall with no repository, the archive not cached: %v; want hello 1 missing", err)
	}
}

// TestMirrorOffline mirrors hello (and lib) online, then offline a lockfile of hello and
// tool into the same directory: the cache keeps no archive as published, so it refuses,
// naming tool, the one archive the directory lacks, and the directory.
func TestMirrorOffline(t *testing.T) {
	o, _ := served(t, t.TempDir())
	s, _ := newSession(t, o, "")
	lock := func(names ...string) *repo.Lock {
		var reqs []repo.Requirement
		for _, n := range names {
			reqs = append(reqs, repo.Requirement{Name: n})
		}
		l, err := s.Lock(t.Context(), session.Request{Requires: reqs})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	hello, both := lock("hello"), lock("hello", "tool")
	dir := filepath.Join(t.TempDir(), "mirror")
	if _, err := s.Mirror(t.Context(), session.Request{Lock: hello}, dir); err != nil {
		t.Fatal(err)
	}
	s.Close()
	o.Offline = true
	s, _ = newSession(t, o, "")
	defer s.Close()
	_, err := s.Mirror(t.Context(), session.Request{Lock: both}, dir)
	var me *session.MirrorOfflineError
	if !errors.As(err, &me) || !errors.Is(err, session.ErrOffline) || me.Dir != dir || !slices.Equal(me.Packages, []string{"tool 1"}) {
		t.Errorf("offline mirror of an archive the directory lacks: %v; want a MirrorOfflineError of %s naming tool 1", err, dir)
	}
}
