package txn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"pkg/fetch"
	"pkg/internal/parallel"
	"pkg/internal/units"
	"pkg/notice"
	"pkg/repo"
)

// Observer hears what a change wants said beside its results: the downloads of a
// Fetcher (on several goroutines at once), and what a session meets on the way (notes,
// warnings, waits). A session given none says nothing.
type Observer interface {
	// Fetching is called as the download of p starts; the bytes downloaded go through the
	// writer it returns, if not nil.
	Fetching(p repo.Package) io.Writer
	// Fetched is called once p is in the cache, or its download failed.
	Fetched(ev Fetched)
	// Waiting is called when p waits for another fetch of its archive, by the processes
	// pids where they are known; again once that wait is over and p is fetched all the same.
	Waiting(p repo.Package, pids []int, again bool)
	// Refetching is called when the cache holds p damaged (err), before it is fetched again.
	Refetching(p repo.Package, err error)
	During(pkgs []repo.Package, fn func() error) error        // fn fetches pkgs (nil: not known yet), whose progress it may show meanwhile
	Retrying(err error, wait time.Duration, attempt, max int) // a request or download is tried again
	Notice(n notice.Notice)                                   // a note (advice, which a quiet command may leave out) or a warning (said all the same)
	RootWaiting(holder string)                                // another process keeps the root's lock past a retry
	RunWaiting(holder string)                                 // another process is making the root of the same run (pkg run)
	LinksWrong(err error)                                     // a root opened whose bin/ links could not be synced (*install.LinksError)
	NotKept(err error)                                        // an index passed, but the cache could not keep a copy (*fetch.NotKeptError)
	// Unverified is an index used unverified (err, trust.ErrUsedUnsigned or ErrUsedUntrusted); local for an
	// unsigned directory on this machine, with no one between it and pkg. It reports
	// whether it said so (install.Notices).
	Unverified(err error, local bool) (said bool)
}

// How says how a package came to be in the cache.
type How int

const (
	Downloaded How = iota // this fetch downloaded it
	Cached                // the cache held it already
	ByOther               // another process fetched it while this one waited
)

// Fetched is the end of one package's fetch.
type Fetched struct {
	Package repo.Package
	How     How
	Elapsed time.Duration // of the download
	Err     error         // why the fetch failed, or nil
}

// Fetcher fetches packages from their repository's source into Cache, Jobs at once.
type Fetcher struct {
	Source   *fetch.Source            // of the packages of a repository Sources does not name
	Sources  map[string]*fetch.Source // by repository name (Package.Repo), as Index.Sources gives them
	Cache    *fetch.Cache             // its WaitLimit bounds a wait for another fetch of the same archive
	Jobs     int
	Offline  bool
	Observer Observer // nil: no one hears

	hook   sync.Once // makes waiting the cache's Waiting, on the first Fetch
	waited sync.Map  // sha256 → true for the archives another fetch was downloading
}

// waiting is the cache's Waiting while f fetches: p waits for another fetch of its
// archive, by the processes pids.
func (f *Fetcher) waiting(p repo.Package, pids []int) {
	_, again := f.waited.Swap(p.SHA256, true)
	if f.Observer != nil {
		f.Observer.Waiting(p, pids, again)
	}
}

// Fetch fetches pkgs and calls ready, if not nil, with the index in pkgs and the cached tar
// of each as soon as that one is in the cache, and a context done once Fetch gives up;
// ready runs on several goroutines at once. Packages of one archive are fetched once, the
// largest archives first. At the first error of a fetch or of ready, Fetch cancels the
// rest and returns that error, a fetch's naming the packages of the archives it did not
// fetch (namesCounted); ready's as it is, since the others' fetches do not matter to what
// failed. Offline, it first fails naming every package missing from the cache
// (*NotCachedError).
func (f *Fetcher) Fetch(ctx context.Context, pkgs []repo.Package, ready func(ctx context.Context, i int, tar string) error) error {
	if f.Offline {
		if err := checkCached(f.Cache, pkgs, false); err != nil {
			return err
		}
	}
	return f.fetch(ctx, pkgs, ready)
}

// fetch is Fetch once an offline change has found every package in the cache.
func (f *Fetcher) fetch(ctx context.Context, pkgs []repo.Package, ready func(ctx context.Context, i int, tar string) error) error {
	f.hook.Do(func() { f.Cache.Waiting = f.waiting })
	fetches := make(map[string]*archiveFetch) // by sha256: the packages of one archive share its fetch
	for _, p := range pkgs {
		if fetches[p.SHA256] == nil {
			fetches[p.SHA256] = &archiveFetch{p: p}
		}
	}
	order := largestFirst(pkgs)
	err := parallel.Each(ctx, len(order), f.Jobs, func(ctx context.Context, k int) error {
		i := order[k]
		a := fetches[pkgs[i].SHA256]
		a.once.Do(func() { a.tar, a.err = f.one(ctx, a.p) })
		if a.err != nil || ready == nil {
			return a.err
		}
		return ready(ctx, i, a.tar)
	})
	if err == nil || ctx.Err() != nil { // the caller's cancellation stopped them all
		return err
	}
	return notFetched(err, pkgs, order, fetches)
}

// notFetched returns err, which stopped the fetches of pkgs (in order, by archive in
// fetches), naming the packages of the archives not fetched where it is a fetch's.
func notFetched(err error, pkgs []repo.Package, order []int, fetches map[string]*archiveFetch) error {
	if !slices.ContainsFunc(slices.Collect(maps.Values(fetches)), func(a *archiveFetch) bool { return a.err == err }) {
		return err // ready's, no fetch's: what was not fetched has no part in it
	}
	var unfetched []repo.Package // one package an archive, the largest first
	for _, i := range order {
		if a := fetches[pkgs[i].SHA256]; a.tar == "" && a.err != err && a.p.Key() == pkgs[i].Key() {
			unfetched = append(unfetched, a.p)
		}
	}
	if len(unfetched) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s not fetched either", err, namesCounted(unfetched))
}

// maxUnfetchedNamed is how many of the packages a fetch did not fetch its failure names
// where there are more: it counts the rest (units.Some, which names one more whole).
const maxUnfetchedNamed = 3

// namesCounted returns "a 1, b 2 and c 3" of pkgs, or "a 1, b 2, c 3 and 4 more".
func namesCounted(pkgs []repo.Package) string {
	names := make([]string, len(pkgs))
	for i, p := range pkgs {
		names[i] = p.Name + " " + p.Version
	}
	return units.Some(names, maxUnfetchedNamed)
}

// archiveFetch is the one fetch of an archive, of p, the first of its packages.
type archiveFetch struct {
	p    repo.Package
	once sync.Once
	tar  string
	err  error
}

// largestFirst returns the indexes of pkgs by archive size, the largest first: a package's
// download, conversion and staging run one after the other, so the largest begun last
// would end the fetches alone (design.md, Fetch pipeline, has the npm tree's figures).
func largestFirst(pkgs []repo.Package) []int {
	order := make([]int, len(pkgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(pkgs[b].Size, pkgs[a].Size) })
	return order
}

// one fetches p and tells the observer.
func (f *Fetcher) one(ctx context.Context, p repo.Package) (string, error) {
	obs := f.Observer
	if f.Cache.Has(p.SHA256) {
		if f.Offline { // the cache alone (no source): its entry, or why it is not fetched again
			tar, err := f.Cache.Fetch(ctx, nil, p, nil)
			if err == nil && obs != nil {
				obs.Fetched(Fetched{Package: p, How: Cached})
			}
			return tar, err
		}
		_, err := f.Cache.Members(p.SHA256)
		if !errors.Is(err, fetch.ErrDamaged) {
			if obs != nil {
				obs.Fetched(Fetched{Package: p, How: Cached})
			}
			return f.Cache.Fetch(ctx, f.source(p), p, nil)
		}
		if obs != nil {
			obs.Refetching(p, err)
		}
	}
	progress := &counter{}
	if obs != nil {
		progress.w = obs.Fetching(p)
	}
	start := time.Now()
	tar, err := f.Cache.Fetch(ctx, f.source(p), p, progress)
	if err != nil && p.Origin != "" {
		err = &LocalError{Origin: p.Origin, Err: err}
	}
	ev := Fetched{Package: p, How: Downloaded, Elapsed: time.Since(start), Err: err}
	if _, ok := f.waited.Load(p.SHA256); ok && err == nil && progress.n == 0 {
		ev.How = ByOther
	}
	if obs != nil {
		obs.Fetched(ev)
	}
	return tar, err
}

// LocalError is the failure to read a package's local archive file (repo.Package.Origin)
// into the cache: the file may be gone, or changed since it was installed. Err names it.
type LocalError struct {
	Origin string
	Err    error
}

func (e *LocalError) Error() string { return e.Err.Error() }
func (e *LocalError) Unwrap() error { return e.Err }

// source returns the source of p's repository.
func (f *Fetcher) source(p repo.Package) *fetch.Source {
	if s := f.Sources[p.Repo]; s != nil {
		return s
	}
	return f.Source
}

// counter counts the bytes written through it to w, if any.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.w != nil {
		return c.w.Write(p)
	}
	return len(p), nil
}
