package fetch

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/repo"
)

// How a download cut short is resumed by the next command (after kill -9, a second Ctrl-C,
// or a network down for longer than the retries). A fetch streams the archive into the
// converter and writes only the aligned tar, so the bytes of an archive of at least
// partialMin that come over HTTP are also appended, as they arrive, to tmp/part-SHA256,
// flocked by its writer. The next fetch of that archive feeds the file's bytes to the
// verifier and the converter again (hashed anew: the sha256 at the end stays the
// authority) and asks the source for the rest with a Range request; a source that sends
// the whole archive instead starts it over, the file emptied. The file goes once the entry
// is committed or the archive refused, and stays when the download failed, to be resumed.
// It is not synced: one a crash of the machine damaged fails the sha256 check once, and
// goes. One nobody wrote to for staleAge goes at any open of the cache (removeTemporary),
// and every one at cache prune and clean (RemoveUnfinished).
//
// Keeping costs a copy into the page cache (about 1.2 ms of CPU per MB, docs/history.md),
// which a download slower than some MiB/s hides behind the network. One that has come faster
// than fastRate, once past partialProbe, stops keeping and drops what it kept: a fetch
// that fast is over in seconds, and one killed costs about as much again.
const (
	partialMin   = 1 << 20  // 1 MiB: below, fetching again costs less than keeping a copy
	partialProbe = 16 << 20 // 16 MiB: bytes a download brings before its rate is judged
	fastRate     = 32 << 20 // 32 MiB/s: averaged since the download began, drops the copy
)

// partialPrefix starts the name of a partial download in tmp/.
const partialPrefix = "part-"

// isPartial reports whether name, in tmp/, is a partial download.
func isPartial(name string) bool {
	sha, ok := strings.CutPrefix(name, partialPrefix)
	return ok && isSHA256(sha)
}

// partial is the file keeping the start of an archive's download.
type partial struct {
	f     *os.File
	dir   *os.File // the cache's tmp/, holding it as name
	name  string
	kept  int64 // bytes it held when opened, for the fetch to read first
	n     int64 // bytes it holds
	cut   error // why the download failed, which keeps the file
	werr  error // why it stopped keeping bytes (a full disk, a fast download)
	probe int64 // partialProbe
	fast  float64
	began time.Time // of the download
}

// errFast stops keeping a download that comes faster than fastRate.
var errFast = errors.New("fetch: download too fast to be worth keeping")

// openPartial returns the partial download of p, for s's fetch of it, or nil when it is
// not kept: a small archive, a local one, or one another fetch is writing.
func (c *Cache) openPartial(s *Source, p repo.Package) *partial {
	if p.Size < partialMin || !s.remote(p) {
		return nil
	}
	name := partialPrefix + p.SHA256
	f, err := dirfd.Open(c.tmp, name, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || c.owner.give(int(f.Fd()), f.Name()) != nil || flock(f, unix.LOCK_EX|unix.LOCK_NB) != nil || !sameFile(f, c.tmp, name) {
		f.Close()
		return nil
	}
	pt := &partial{f: f, dir: c.tmp, name: name, kept: info.Size(), n: info.Size(), probe: partialProbe, fast: fastRate}
	if pt.kept > p.Size {
		if pt.truncate(); pt.werr != nil {
			f.Close()
			return nil
		}
	}
	return pt
}

// remote reports whether s reads p's archive over HTTP, at first: from a by-digest mirror
// or where the index names it.
func (s *Source) remote(p repo.Package) bool {
	if s.dm != nil && s.dm.remote() {
		return true
	}
	u, err := url.Parse(p.Archive)
	if err == nil && u.Scheme != "" {
		return u.Scheme == "http" || u.Scheme == "https"
	}
	return s.t.remote()
}

// size returns the bytes pt holds for the fetch to read first; 0 for none.
func (pt *partial) size() int64 {
	if pt == nil {
		return 0
	}
	return pt.kept
}

// truncate empties the file: its bytes are not the archive's start.
func (pt *partial) truncate() {
	if pt.werr = pt.f.Truncate(0); pt.werr == nil {
		pt.kept, pt.n = 0, 0
	}
}

// reader returns the archive's bytes: those pt kept, unless b starts over, then b's, which
// it keeps too.
func (pt *partial) reader(b body) io.Reader {
	if pt == nil {
		return b
	}
	if b.start() < pt.kept {
		pt.truncate()
	}
	if pt.werr != nil {
		return b
	}
	pt.began = time.Now()
	return io.MultiReader(io.NewSectionReader(pt.f, 0, pt.kept), &keeping{b, pt})
}

// close ends the fetch's use of pt, which failed with err: the file stays, to be resumed,
// when it holds bytes and the download was cut or could not start, and otherwise goes.
func (pt *partial) close(err error) {
	if pt == nil {
		return
	}
	switch {
	case err == nil || pt.cut == nil || pt.n == 0:
		removeAt(pt.dir, pt.name)
	case pt.werr != nil && pt.f.Truncate(pt.n) != nil: // what a full disk let it keep, or nothing
		removeAt(pt.dir, pt.name)
	}
	pt.f.Close()
}

// keeping is an archive's body whose bytes are appended to its partial download as they
// are read.
type keeping struct {
	b  body
	pt *partial
}

func (k *keeping) Read(p []byte) (int, error) {
	n, err := k.b.Read(p)
	pt := k.pt
	if n > 0 && pt.werr == nil {
		if _, pt.werr = pt.f.WriteAt(p[:n], pt.n); pt.werr == nil {
			pt.n += int64(n)
			pt.judge()
		}
	}
	if err != nil && err != io.EOF && !errors.Is(err, ErrMismatch) {
		pt.cut = err
	}
	return n, err
}

// judge drops what pt kept, and keeps no more, once the download has come faster than
// its fast rate past its probe.
func (pt *partial) judge() {
	got := pt.n - pt.kept
	if got < pt.probe || float64(got) < pt.fast*time.Since(pt.began).Seconds() {
		return
	}
	pt.werr = errFast
	if pt.f.Truncate(0) == nil { // frees its pages now
		pt.n = 0
	}
}

// fetchArchive downloads and converts p's archive into the cache, from what a cut
// download of it kept on. One resumed so whose size or sha256 is not the index's is
// fetched once more, from its first byte, before it is refused: the bytes kept may be what
// was wrong (a crash of the machine, a server that sent others), and they are gone by then.
// One refused is asked of the locations that did not send it (refused.go).
func (c *Cache) fetchArchive(ctx context.Context, s *Source, p repo.Package, progress io.Writer) error {
	resume := true
	return s.refusing(ctx, func(r *refusals) error {
		resumed, err := c.fetchFrom(ctx, s, p, progress, resume, r)
		resume = false
		if resumed && errors.Is(err, ErrMismatch) && ctx.Err() == nil {
			r.begin()
			_, err = c.fetchFrom(ctx, s, p, progress, false, r)
		}
		return err
	})
}

// packageError is the failure to fetch one package's archive, from a URL or path once
// its bytes came.
type packageError struct {
	name, version string
	from          string // "" before any byte came
	err           error
}

func (e *packageError) Error() string {
	if e.from != "" {
		return "fetch " + e.name + " " + e.version + " from " + e.from + ": " + e.err.Error()
	}
	return "fetch " + e.name + " " + e.version + ": " + e.err.Error()
}

func (e *packageError) Unwrap() error { return e.err }

// fetchFrom downloads and converts p's archive into the cache, from the bytes its partial
// download kept when resume is set, and reports whether there were any; r as openArchive's.
func (c *Cache) fetchFrom(ctx context.Context, s *Source, p repo.Package, progress io.Writer, resume bool, r *refusals) (resumed bool, err error) {
	pt := c.openPartial(s, p)
	defer func() { pt.close(err) }()
	if !resume && pt.size() > 0 {
		if pt.truncate(); pt.werr != nil {
			return false, &packageError{p.Name, p.Version, "", pt.werr}
		}
	}
	b, err := s.openArchive(ctx, c, p, pt.size(), r)
	if err != nil {
		if pt != nil && (isDown(err) || ctx.Err() != nil) {
			pt.cut = err // says nothing of the bytes kept
		}
		// The rest refused (a 206 of an archive of another size) is a resumed archive
		// refused: it is fetched again from its first byte, which tells a SizeError.
		return pt.size() > 0 && errors.Is(err, ErrMismatch), &packageError{p.Name, p.Version, "", err}
	}
	defer b.Close()
	resumed = b.start() > 0
	if err := c.store(newVerifier(pt.reader(b), p, progress), p); err != nil {
		if se := (*SizeError)(nil); errors.As(err, &se) {
			return resumed, se // the same from every location, and from the cache
		}
		return resumed, &packageError{p.Name, p.Version, b.from(), err}
	}
	return resumed, nil
}
