package txn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// twoRepos is a signed repository, team, before an unsigned one, main, each served over
// loopback HTTP: team has hello 2, which needs lib, and jq 2; main has hello 1, lib 1
// and jq 1.
type twoRepos struct {
	w          *world
	team, main string // their URLs
	teamDir    string
	key        trust.PrivateKey
}

func newTwoRepos(t *testing.T) *twoRepos {
	t.Helper()
	w := newWorld(t)
	r := &twoRepos{w: w, teamDir: filepath.Join(t.TempDir(), "team")}
	addPackage(t, r.teamDir, "hello", "2", "lib")
	addPackage(t, r.teamDir, "jq", "2")
	addPackage(t, w.repo, "hello", "1")
	addPackage(t, w.repo, "lib", "1")
	addPackage(t, w.repo, "jq", "1")
	var err error
	if r.key, err = trust.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	r.sign(t)
	for _, s := range []struct {
		dir string
		url *string
	}{{r.teamDir, &r.team}, {w.repo, &r.main}} {
		srv := httptest.NewServer(http.FileServer(http.Dir(s.dir)))
		t.Cleanup(srv.Close)
		*s.url = srv.URL + "/"
	}
	return r
}

// sign signs team's index again, a version newer.
func (r *twoRepos) sign(t *testing.T) {
	t.Helper()
	s := &repo.Signer{Name: "team", Expires: time.Now().Add(time.Hour), Sign: func(b []byte) []byte { return trust.Sign(b, r.key) }}
	if _, err := repo.Sign(t.Context(), r.teamDir, s); err != nil {
		t.Fatal(err)
	}
}

// index reads both repositories for the root at dir, team trusting the key, and merges them.
func (r *twoRepos) index(t *testing.T, dir string) *txn.Catalog {
	t.Helper()
	return r.read(t, r.w.cache, dir, "team", "main")
}

// read reads the repositories named, in that order, through cache for the root at dir,
// team trusting the key, and merges them.
func (r *twoRepos) read(t *testing.T, cache *fetch.Cache, dir string, names ...string) *txn.Catalog {
	t.Helper()
	repos := map[string]struct {
		url   string
		trust trust.Policy
	}{"team": {r.team, trust.Policy{Keys: []trust.PublicKey{r.key.Public()}}}, "main": {r.main, trust.Policy{}}}
	var ixs []*txn.Catalog
	for _, name := range names {
		s := repos[name]
		ix, err := txn.ReadIndex(context.Background(), cache, dir, install.Options{}, s.url, fetch.Options{Trust: s.trust})
		if err != nil {
			t.Fatal(err)
		}
		ix.Name = name
		ixs = append(ixs, ix)
	}
	ix, err := txn.Merge(ixs)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// fetcher fetches each package of ix from its own repository into cache.
func fetcher(ix *txn.Catalog, cache *fetch.Cache) *txn.Fetcher {
	f := &txn.Fetcher{Source: ix.Source, Sources: ix.Sources(), Jobs: 2, Cache: cache}
	return f
}

func openCache(t *testing.T) *fetch.Cache {
	t.Helper()
	cache, err := fetch.OpenCache(context.Background(), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	return cache
}

// says runs the command NAME of the root at dir and returns what it prints.
func says(t *testing.T, dir, name string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(dir, "bin", name)).Output()
	if err != nil {
		t.Fatalf("run %s of root %s: %v", name, dir, err)
	}
	return strings.TrimSpace(string(out))
}

// TestTwoRepos installs from two repositories over loopback HTTP, a signed one before an
// unsigned one: a name resolves from the first that has it, a pin takes it from the
// other, a dependency resolves across them, the signed one is recorded in the root and
// the other not, and a lockfile of both syncs a fresh root, through a fresh
// cache, to the same.
func TestTwoRepos(t *testing.T) {
	r := newTwoRepos(t)
	root := openRoot(t)
	ix := r.index(t, root.Dir())
	if got := ix.Repos(); len(got) != 2 || !got[0].Trust.Verified() || got[1].Trust.Verified() {
		t.Fatalf("repositories %v; want team verified, then main not", got)
	}

	reqs := []repo.Requirement{{Name: "hello"}, {Name: "jq", Repo: "main"}}
	plan, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: reqs, Root: root.Dir(), Catalog: ix, Cache: r.w.cache})
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]string{}
	for _, p := range plan.Packages() {
		from[p.Name] = p.Repo + " " + p.Version
	}
	want := map[string]string{"hello": "team 2", "lib": "main 1", "jq": "main 1"}
	if len(from) != len(want) {
		t.Errorf("plan installs %v, want %v", from, want)
	}
	for name, w := range want {
		if from[name] != w {
			t.Errorf("plan installs %s from %q, want %q (priority, pin and cross-repository dependency)", name, from[name], w)
		}
	}
	plan.Bind(txn.Target{Root: root, Fetcher: fetcher(ix, r.w.cache)})
	if _, err := plan.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]string{"hello": "hello 2", "lib": "lib 1", "jq": "jq 1"} {
		if got := says(t, root.Dir(), name); got != w {
			t.Errorf("%s says %q, want %q", name, got, w)
		}
	}
	var pins pin.Set // the root was given up with the plan: read it again
	err = install.View(root.Dir(), install.Options{}, nil, func(d *db.DB) (err error) { pins, err = d.Repos(); return err })
	if p := pins.At(r.team); err != nil || p == nil || p.Name != "team" || p.KeyID != r.key.Public().ID() {
		t.Errorf("the root's pin of team: %+v, %v; want it pinned to the key", p, err)
	}
	if p := pins.At(r.main); p != nil {
		t.Errorf("the root's pin of main: %+v; want none (unsigned)", p)
	}

	path := filepath.Join(t.TempDir(), "pkg.lock")
	l, err := txn.Lock(nil, ix, reqs, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Lockfile int
		Repos    []repo.LockRepo
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Fatal(err)
	}
	if head.Lockfile != 1 || len(head.Repos) != 2 || head.Repos[0].Name != "team" || head.Repos[0].Index == nil || head.Repos[1].Index != nil {
		t.Fatalf("lockfile %s; want format 1 of team (signed, its index recorded) and main", data)
	}
	l, err = repo.ReadLock(path)
	if err != nil {
		t.Fatal(err)
	}

	// A fresh root and cache: every archive is fetched again, each from its repository.
	fresh, cache := openRoot(t), openCache(t)
	sp, _, err := txn.SyncPlan(fresh, l, false, cache)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Relocate(l, ix.Sources(), nil); err != nil {
		t.Fatal(err)
	}
	sp.Bind(txn.Target{Root: fresh, Fetcher: fetcher(ix, cache)})
	if _, err := sp.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]string{"hello": "hello 2", "lib": "lib 1", "jq": "jq 1"} {
		if got := says(t, fresh.Dir(), name); got != w {
			t.Errorf("synced root: %s says %q, want %q", name, got, w)
		}
	}
}

// TestLockReposRefuses locks again over a lockfile of two repositories, the first signed:
// a lock from an older signed index of it, as a stale mirror serves, is refused naming
// it, and so is one that leaves it out, whose packages would come from the other.
func TestLockReposRefuses(t *testing.T) {
	r := newTwoRepos(t)
	var old [][]byte // team's index and signature, version 1
	for _, name := range []string{"index.json", repo.SignatureName} {
		b, err := os.ReadFile(filepath.Join(r.teamDir, name))
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, b)
	}
	r.sign(t)
	reqs := []repo.Requirement{{Name: "hello"}, {Name: "jq"}}
	l, err := txn.Lock(nil, r.index(t, ""), reqs, "pkg.lock", nil)
	if err != nil {
		t.Fatal(err)
	}
	if x := l.Repos[0].Index; x == nil || x.Version != 2 {
		t.Fatalf("lock records team's index %+v, want version 2", x)
	}

	for i, name := range []string{"index.json", repo.SignatureName} {
		if err := os.WriteFile(filepath.Join(r.teamDir, name), old[i], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		what string
		ix   *txn.Catalog
		reqs []repo.Requirement
		want error
	}{
		// A fresh cache, which holds no later copy of team's index to refuse it with.
		{"an older signed index of team", r.read(t, openCache(t), "", "team", "main"), reqs, pin.ErrLockRollback},
		{"main alone", r.read(t, openCache(t), "", "main"), []repo.Requirement{{Name: "jq"}}, pin.ErrLockNotVerified},
	} {
		_, err := txn.Lock(l, tc.ix, tc.reqs, "pkg.lock", nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("lock over it with %s: %v; want it refused: %v", tc.what, err, tc.want)
		}
	}
}
