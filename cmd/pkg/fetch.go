package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/repo"
	"pkg/trust"
)

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "download packages and their dependencies into the cache without installing",
		ArgsUsage: "NAME[@VERSION|CONSTRAINT]...",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			reqs, err := requirements(c.Args().Slice())
			if err != nil {
				return err
			}
			f, ix, err := openFetcher(c)
			if err != nil {
				return err
			}
			pkgs, err := ix.Resolve(reqs)
			if err != nil {
				return f.about(err)
			}
			f.verbose = true
			return f.all(pkgs, nil)
		},
	}
}

// fetcher fetches packages into the cache, --jobs at once, and reports each download: on
// a terminal with a progress bar while it runs, else with one line when it ends.
type fetcher struct {
	c       *cli.Context
	src     *fetch.Source
	cache   *fetch.Cache
	verbose bool         // also report packages already in the cache
	index   trust.Result // how the index was verified, for the root to record
	pin     *db.Repo     // the root's record of the repository when the index was read
	bars    *bars
	desc    int        // width of the bars' descriptions, so that the bars line up
	mu      sync.Mutex // serializes output
	waited  sync.Map   // sha256 → true for the archives another fetch was downloading
}

// useCache makes f fetch into cache, saying when a fetch waits for another one of the same
// archive (another pkg sharing the cache).
func (f *fetcher) useCache(cache *fetch.Cache) {
	f.cache = cache
	cache.WaitLimit = f.c.Duration("lock-timeout")
	cache.Waiting = func(p repo.Package, pids []int) {
		if _, again := f.waited.Swap(p.SHA256, true); again {
			f.note("%s %s: waited %s for another pkg to fetch it; fetching it too", p.Name, p.Version, cache.WaitLimit)
			return
		}
		who := "another pkg"
		if len(pids) > 0 {
			who = processes(pids)
		}
		f.note("%s %s: waiting for %s, fetching it into the cache", p.Name, p.Version, who)
	}
}

// about names the repository in err, an error resolving requirements against its index.
func (f *fetcher) about(err error) error {
	return fmt.Errorf("%w (repository %s)", err, f.src.URL())
}

// all fetches pkgs and calls ready, if not nil, with the index in pkgs and the cached tar
// of each as soon as that one is in the cache, and a context done once all gives up; ready
// runs on several goroutines at once.
// At the first error of a fetch or of ready, all cancels the rest and returns that error.
// Offline, it first fails naming every package missing from the cache.
func (f *fetcher) all(pkgs []repo.Package, ready func(ctx context.Context, i int, tar string) error) error {
	if err := f.checkOffline(pkgs); err != nil {
		return err
	}
	if !f.c.Bool("quiet") {
		f.bars = newBars(f.c.App.Writer)
	}
	for _, p := range pkgs {
		f.desc = max(f.desc, len(p.Name)+1+len(p.Version))
	}
	if f.bars != nil {
		defer f.bars.close()
	}
	ctx, cancel := context.WithCancel(f.c.Context)
	defer cancel()
	var (
		wg      sync.WaitGroup
		once    sync.Once
		first   error
		slots   = make(chan struct{}, f.c.Int("jobs"))
		fetches = make(map[string]func() (string, error)) // sha256 → its one fetch: packages may share an archive
	)
	for _, p := range pkgs {
		if fetches[p.SHA256] == nil {
			fetches[p.SHA256] = sync.OnceValues(func() (string, error) { return f.one(ctx, p) })
		}
	}
	for i, p := range pkgs {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			tar, err := fetches[p.SHA256]()
			if err == nil && ready != nil {
				err = ready(ctx, i, tar)
			}
			if err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = f.c.Context.Err()
	}
	return first
}

// checkOffline, offline, refuses pkgs unless every one is in the cache, naming for each
// missing one the other archives of its name and version that the cache holds.
func (f *fetcher) checkOffline(pkgs []repo.Package) error {
	if !f.c.Bool("offline") {
		return nil
	}
	var (
		missing []string
		entries []fetch.Entry
		listed  bool
	)
	for _, p := range pkgs {
		if f.cache.Has(p.SHA256) {
			continue
		}
		if !listed {
			entries, _ = f.cache.List() // only to explain: without it the message is shorter
			listed = true
		}
		missing = append(missing, p.Name+" "+p.Version+f.otherArchives(p, entries)+f.otherVersions(p, entries))
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", errNotCached, strings.Join(missing, ", "))
	}
	return nil
}

// errNotCached is checkOffline's refusal.
var errNotCached = errors.New("offline: not in the cache")

// otherVersions returns " (the cache holds NAME 1.3, 1.2: ask for NAME=1.3)" when entries
// hold other versions of p's name, for an install, which may ask for one; else "".
func (f *fetcher) otherVersions(p repo.Package, entries []fetch.Entry) string {
	var vs []string
	for _, e := range entries {
		if e.Name == p.Name && e.Version != p.Version && !slices.Contains(vs, e.Version) {
			vs = append(vs, e.Version)
		}
	}
	if len(vs) == 0 || f.index.Location == "" {
		return ""
	}
	slices.SortFunc(vs, func(a, b string) int { return repo.CompareVersions(b, a) })
	return fmt.Sprintf(" (the cache holds %s %s: ask for %s=%s)", p.Name, strings.Join(vs, ", "), p.Name, vs[0])
}

// otherArchives returns " (sha256 … by the saved index; the cache holds NAME VERSION with
// sha256 …, another archive of it)" when entries hold p's name and version from another
// archive, else "". Sync reads no index: its packages come from the lockfile.
func (f *fetcher) otherArchives(p repo.Package, entries []fetch.Entry) string {
	var shas []string
	for _, e := range entries {
		if e.Name == p.Name && e.Version == p.Version && e.SHA256 != p.SHA256 {
			shas = append(shas, shortSHA(e.SHA256))
		}
	}
	if len(shas) == 0 {
		return ""
	}
	by, what := "the saved index", "another archive of it"
	if f.index.Location == "" {
		by = "the lockfile"
	}
	if len(shas) > 1 {
		what = "other archives of it"
	}
	return fmt.Sprintf(" (sha256 %s by %s; the cache holds %s %s with sha256 %s, %s)",
		shortSHA(p.SHA256), by, p.Name, p.Version, strings.Join(shas, ", "), what)
}

// shortSHA shortens a sha256 to the digits 'pkg cache list' shows.
func shortSHA(sha string) string { return sha[:min(16, len(sha))] + "…" }

// one fetches p and reports it.
func (f *fetcher) one(ctx context.Context, p repo.Package) (string, error) {
	if f.cache.Has(p.SHA256) {
		_, err := f.cache.Members(p.SHA256)
		if !errors.Is(err, fetch.ErrDamaged) {
			if f.verbose {
				f.report(nil, "%s %s is already in the cache", p.Name, p.Version)
			}
			return f.cache.Fetch(ctx, f.src, p, nil)
		}
		if f.c.Bool("offline") {
			return "", fmt.Errorf("%w; %w, so it is not fetched again", err, fetch.ErrOffline)
		}
		f.note("%s: fetching it again", err)
	}
	var b *bar
	progress := &counter{}
	if f.bars != nil {
		b = f.bars.add(fmt.Sprintf("%-*s", f.desc, p.Name+" "+p.Version), p.Size)
		progress.w = b.pb
	}
	start := time.Now()
	tar, err := f.cache.Fetch(ctx, f.src, p, progress)
	if err != nil {
		if b != nil {
			f.bars.finish(b, "")
		}
		return "", err
	}
	if _, ok := f.waited.Load(p.SHA256); ok && progress.n == 0 {
		f.report(b, "%s %s is in the cache: another pkg fetched it", p.Name, p.Version)
		return tar, nil
	}
	d := time.Since(start)
	f.report(b, "fetched %s %s: %s in %s%s", p.Name, p.Version, size(p.Size), dur(d), throughput(p.Size, d))
	return tar, nil
}

// A download's rate is said only past these: below, it is mostly the time to connect,
// read the index of the archive and align it, not the network's speed.
const (
	rateMinSize = 1 << 20 // 1 MiB
	rateMinTime = 500 * time.Millisecond
)

// throughput returns " (1.2 MiB/s)" for n bytes fetched in d, or "" where that rate
// would not mean anything.
func throughput(n int64, d time.Duration) string {
	if n < rateMinSize || d < rateMinTime {
		return ""
	}
	return " (" + size(int64(float64(n)/d.Seconds())) + "/s)"
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

// retrying announces another attempt at a request or a download, above the bars if any.
func (f *fetcher) retrying(err error, wait time.Duration, attempt, max int) {
	noteRetry(f.c, f.bars, err, wait, attempt, max)
}

// note prints a note, above the bars if any, unless --quiet.
func (f *fetcher) note(format string, args ...any) { noteAbove(f.c, f.bars, format, args...) }

// report prints a line, above the bars if any, and ends b.
func (f *fetcher) report(b *bar, format string, args ...any) {
	if f.c.Bool("quiet") {
		return
	}
	line := fmt.Sprintf(format, args...)
	if f.bars != nil {
		f.bars.finish(b, line)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintln(f.c.App.Writer, line)
}
