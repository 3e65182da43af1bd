// Package progress shows what a txn.Fetcher does: on a terminal, a bar per download in
// flight below the lines printed so far; elsewhere, one line as each download ends. It
// decides nothing: it says what the fetcher reports, and the notes it is given, above the
// bars.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"pkg/internal/procname"
	"pkg/internal/units"
	"pkg/repo"
	"pkg/txn"
)

// Options controls a Reporter.
type Options struct {
	Quiet       bool          // print nothing
	Verbose     bool          // also say which packages were in the cache already
	NotePrefix  string        // begins each note: "pkg: note: "
	LockTimeout time.Duration // how long a fetch waits for another process's, for saying so
}

// A Reporter prints the progress of downloads to out, and notes to notes, or above the
// bars while they are drawn.
type Reporter struct {
	out, notes io.Writer
	o          Options
	bars       *bars
	desc       int        // width of the bars' descriptions, so that the bars line up
	mu         sync.Mutex // serializes output and live
	live       map[string]*bar
}

// New returns a Reporter printing to out and notes.
func New(out, notes io.Writer, o Options) *Reporter {
	return &Reporter{out: out, notes: notes, o: o, live: make(map[string]*bar)}
}

// During draws the bars of pkgs' downloads, on a terminal, while fn runs.
func (r *Reporter) During(pkgs []repo.Package, fn func() error) error {
	if !r.o.Quiet {
		r.bars = newBars(r.out)
	}
	for _, p := range pkgs {
		r.desc = max(r.desc, len(p.Name)+1+len(p.Version))
	}
	if r.bars != nil {
		defer func() { r.bars.close(); r.bars = nil }()
	}
	return fn()
}

func (r *Reporter) Fetching(p repo.Package) io.Writer {
	if r.bars == nil {
		return nil
	}
	b := r.bars.add(fmt.Sprintf("%-*s", r.desc, p.Name+" "+p.Version), p.Size)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[p.SHA256] = b
	return b.pb
}

func (r *Reporter) Fetched(ev txn.Fetched) {
	p := ev.Package
	r.mu.Lock()
	b := r.live[p.SHA256]
	delete(r.live, p.SHA256)
	r.mu.Unlock()
	switch {
	case ev.Err != nil:
		if b != nil {
			r.bars.finish(b, "")
		}
	case ev.How == txn.Cached:
		if r.o.Verbose {
			r.report(nil, "%s %s is already in the cache", p.Name, p.Version)
		}
	case ev.How == txn.ByOther:
		r.report(b, "%s %s is in the cache: another pkg fetched it", p.Name, p.Version)
	default:
		d := ev.Elapsed
		r.report(b, "fetched %s %s: %s in %s%s", p.Name, p.Version, units.Size(p.Size), units.Duration(d), throughput(p.Size, d))
	}
}

func (r *Reporter) Waiting(p repo.Package, pids []int, again bool) {
	if again {
		r.Note("%s %s: waited %s for another pkg to fetch it; fetching it too", p.Name, p.Version, r.o.LockTimeout)
		return
	}
	who := "another pkg"
	if len(pids) > 0 {
		who = procname.Names(pids)
	}
	r.Note("%s %s: waiting for %s, fetching it into the cache", p.Name, p.Version, who)
}

func (r *Reporter) Refetching(p repo.Package, err error) {
	r.Note("%s: fetching it again", err)
}

// Retrying says that a request or a download is tried again, and why.
func (r *Reporter) Retrying(err error, wait time.Duration, attempt, max int) {
	r.Note("%s; trying again in %s (attempt %d of %d)", err, units.Duration(wait), attempt, max)
}

// Note prints a note, above the bars if any.
func (r *Reporter) Note(format string, args ...any) {
	if r.o.Quiet {
		return
	}
	line := r.o.NotePrefix + fmt.Sprintf(format, args...)
	if bs := r.bars; bs != nil {
		bs.mu.Lock()
		defer bs.mu.Unlock()
		bs.draw(line)
		return
	}
	fmt.Fprintln(r.notes, line)
}

// report prints a line, above the bars if any, and ends b.
func (r *Reporter) report(b *bar, format string, args ...any) {
	if r.o.Quiet {
		return
	}
	line := fmt.Sprintf(format, args...)
	if r.bars != nil {
		r.bars.finish(b, line)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.out, line)
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
