package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/internal/units"
	"pkg/repo"
	"pkg/txn"
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
			f, ix, err := openFetcher(c, false)
			if err != nil {
				return err
			}
			pkgs, err := ix.Resolve(reqs)
			if err != nil {
				return ix.About(err)
			}
			obs := f.Observer.(*progress)
			obs.verbose = true
			return obs.during(pkgs, func() error { return f.Fetch(c.Context, pkgs, nil) })
		},
	}
}

// progress reports each download of a txn.Fetcher: on a terminal with a progress bar
// while it runs, else with one line when it ends.
type progress struct {
	c       *cli.Context
	verbose bool // also report packages already in the cache
	bars    *bars
	desc    int        // width of the bars' descriptions, so that the bars line up
	mu      sync.Mutex // serializes output and live
	live    map[string]*bar
}

var _ txn.Observer = (*progress)(nil)

// during draws the bars of pkgs' downloads, unless --quiet, while fn runs.
func (o *progress) during(pkgs []repo.Package, fn func() error) error {
	if !o.c.Bool("quiet") {
		o.bars = newBars(o.c.App.Writer)
	}
	for _, p := range pkgs {
		o.desc = max(o.desc, len(p.Name)+1+len(p.Version))
	}
	if o.bars != nil {
		defer func() { o.bars.close(); o.bars = nil }()
	}
	return fn()
}

func (o *progress) Fetching(p repo.Package) io.Writer {
	if o.bars == nil {
		return nil
	}
	b := o.bars.add(fmt.Sprintf("%-*s", o.desc, p.Name+" "+p.Version), p.Size)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.live == nil {
		o.live = make(map[string]*bar)
	}
	o.live[p.SHA256] = b
	return b.pb
}

func (o *progress) Fetched(ev txn.Fetched) {
	p := ev.Package
	o.mu.Lock()
	b := o.live[p.SHA256]
	delete(o.live, p.SHA256)
	o.mu.Unlock()
	switch {
	case ev.Err != nil:
		if b != nil {
			o.bars.finish(b, "")
		}
	case ev.How == txn.Cached:
		if o.verbose {
			o.report(nil, "%s %s is already in the cache", p.Name, p.Version)
		}
	case ev.How == txn.ByOther:
		o.report(b, "%s %s is in the cache: another pkg fetched it", p.Name, p.Version)
	default:
		d := ev.Elapsed
		o.report(b, "fetched %s %s: %s in %s%s", p.Name, p.Version, units.Size(p.Size), units.Duration(d), throughput(p.Size, d))
	}
}

func (o *progress) Waiting(p repo.Package, pids []int, again bool) {
	if again {
		o.note("%s %s: waited %s for another pkg to fetch it; fetching it too", p.Name, p.Version, o.c.Duration("lock-timeout"))
		return
	}
	who := "another pkg"
	if len(pids) > 0 {
		who = processes(pids)
	}
	o.note("%s %s: waiting for %s, fetching it into the cache", p.Name, p.Version, who)
}

func (o *progress) Refetching(p repo.Package, err error) {
	o.note("%s: fetching it again", err)
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
	return " (" + units.Size(int64(float64(n)/d.Seconds())) + "/s)"
}

// retrying announces another attempt at a request or a download, above the bars if any.
func (o *progress) retrying(err error, wait time.Duration, attempt, max int) {
	noteRetry(o.c, o.bars, err, wait, attempt, max)
}

// note prints a note, above the bars if any, unless --quiet.
func (o *progress) note(format string, args ...any) { noteAbove(o.c, o.bars, format, args...) }

// report prints a line, above the bars if any, and ends b.
func (o *progress) report(b *bar, format string, args ...any) {
	if o.c.Bool("quiet") {
		return
	}
	line := fmt.Sprintf(format, args...)
	if o.bars != nil {
		o.bars.finish(b, line)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.c.App.Writer, line)
}
