package fetch

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"pkg/repo"
	"pkg/tarutil"
)

// The pipes between the stages of a conversion hold 4 MiB each, so that the stages, whose
// speeds vary from block to block and file to file, seldom wait for each other (16 chunks
// converted faster than 4: docs/history.md).
const (
	pipeChunks    = 16
	pipeChunkSize = 256 << 10 // 256 KiB
	streamBufSize = 64 << 10  // 64 KiB between the compressed pipe and the decompressor
)

// maxTrailer bounds what may follow the end of the tar in the decompressed stream (tar
// writers pad to a record: GNU tar's is 10 KiB by default, 2 MiB with -b 4096).
const maxTrailer = 16 << 20 // 16 MiB

// maxOverrun bounds what a verifier reads past the size an archive is declared to have, to
// tell whether the archive is the one declared, its size wrong (*SizeError): at least
// this, and as much as the declared size.
const maxOverrun = 64 << 20 // 64 MiB

// verifier counts and hashes the archive's bytes as they are read, passes on at most one
// byte more than the index declares, and at the end of the archive returns, instead of
// io.EOF, an error for a size or sha256 that differs from the index: a *SizeError where
// only the size does.
type verifier struct {
	r        io.Reader
	p        repo.Package
	n        int64
	h        hash.Hash
	progress io.Writer // or nil
}

func newVerifier(r io.Reader, p repo.Package, progress io.Writer) *verifier {
	return &verifier{r: r, p: p, h: sha256.New(), progress: progress}
}

func (v *verifier) Read(b []byte) (int, error) {
	if left := v.p.Size - v.n; left < int64(len(b)) { // so left+1 cannot overflow
		b = b[:max(left+1, 0)]
	}
	n, err := v.r.Read(b)
	v.n += int64(n)
	v.h.Write(b[:n])
	if v.progress != nil && n > 0 {
		v.progress.Write(b[:n])
	}
	switch {
	case v.n > v.p.Size:
		return n, v.overrun()
	case err == io.EOF:
		return n, v.check()
	}
	return n, err
}

// overrun reads and hashes the rest of an archive that is larger than declared, passing
// none of it on, up to maxOverrun bytes or as many as declared past the size declared, and
// returns check's error for it; an archive larger still is refused as larger than
// declared. A read that fails returns its error, as any read of the archive does: a Ctrl-C
// is the cancellation, not a verdict on the archive.
func (v *verifier) overrun() error {
	limit := max(v.p.Size, maxOverrun)
	n, err := io.Copy(v.h, io.LimitReader(v.r, limit+1))
	v.n += n
	switch {
	case err != nil:
		return err
	case n > limit:
		return mismatch(fmt.Sprintf("archive is larger than the %d bytes the index declares", v.p.Size))
	}
	return v.check()
}

// check compares what was read, all of the archive, with the index entry.
func (v *verifier) check() error {
	sum := hex.EncodeToString(v.h.Sum(nil))
	switch {
	case v.n != v.p.Size && sum == v.p.SHA256:
		return &SizeError{Name: v.p.Name, Version: v.p.Version, Declared: v.p.Size, Size: v.n}
	case v.n != v.p.Size:
		return mismatch(fmt.Sprintf("archive is %d bytes, index declares %d", v.n, v.p.Size))
	case sum != v.p.SHA256:
		return mismatch(fmt.Sprintf("sha256 mismatch: archive has %s, index declares %s", sum, v.p.SHA256))
	}
	return io.EOF
}

// ErrMismatch is what the error for an archive whose size or sha256 is not the one its
// index entry (or lockfile line) declares is, but where its sha256 is (*SizeError).
var ErrMismatch = errors.New("fetch: archive is not the one the index names")

// mismatch is an error that is ErrMismatch, with its own text.
type mismatch string

func (m mismatch) Error() string        { return string(m) }
func (m mismatch) Is(target error) bool { return target == ErrMismatch }

// SizeError refuses a package whose archive has the sha256 its index entry (or lockfile
// line) declares, and another size: the archive is the one named, and the size declared
// is wrong, which no mirror can mend. A download finds it at the archive's end, a cache
// entry as it is used (its index records the archive's size); neither is kept.
type SizeError struct {
	Name, Version string
	Declared      int64 // the size declared
	Size          int64 // the archive's
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("fetch %s %s: its archive is %d bytes, not the %d declared; its sha256 is the one declared, so the size declared is wrong",
		e.Name, e.Version, e.Size, e.Declared)
}

// stickyWriter keeps the first error of w, so that a conversion can tell a failure to
// write the cache from a refused archive.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(b)
	s.err = err
	return n, err
}

// stickyLender is a stickyWriter of a tarutil.Lender, which lends its buffers too.
type stickyLender struct {
	*stickyWriter
	l tarutil.Lender
}

func (s *stickyLender) Lend(n int) []byte { return s.l.Lend(n) }
func (s *stickyLender) Hold() int         { return s.l.Hold() }

func (s *stickyLender) Fill(k int) error {
	if s.err == nil {
		s.err = s.l.Fill(k)
	}
	return s.err
}

// conversion is what convert needs besides the archive.
type conversion struct {
	lim     tarutil.Limits
	tmp     string        // directory a zip is staged in
	local   *localArchive // the archive, when it is a file already: a zip is read from it, not staged
	control **Control     // if not nil, set to a .deb's control fields
	idx     io.Writer     // if not nil, where the tar's index is written (tarutil.AlignEdit)
	links   *debLinks     // set by convert: a .deb's absolute symlinks, made relative
}

// convert reads an archive from src, decompresses it and writes its aligned form to w, in
// three goroutines joined by pipes, so that a conversion takes about as long as its
// slowest stage: reading src (where the archive is verified), decompressing, and aligning
// (where each file's data is hashed).
// An error from src comes first: a wrong archive makes the decompressor fail too, but is
// the cause. After any other failure src is still read to its end, to report a wrong
// archive as such, unless writing w failed or src is cv.local, which nothing verifies.
// With cv.idx not nil, the tar's index is written there as the members pass
// (tarutil.AlignEdit) rather than listed in the Stats. A .deb's absolute symlinks into
// its own top-level directories are made relative (debLinks).
func convert(w io.Writer, src io.Reader, cv conversion) (tarutil.Stats, error) {
	raw, plain := newPipe(pipeChunks, pipeChunkSize), newPipe(pipeChunks, pipeChunkSize)
	cv.links = newDebLinks()
	abort := make(chan struct{})
	if cv.local != nil {
		close(abort)
	}
	srcErr, decErr := make(chan error, 1), make(chan error, 1)
	go func() { srcErr <- pump(raw, src, abort) }()
	go func() {
		defer raw.closeRead()
		br := streamReader(raw)
		defer putStreamReader(br)
		decErr <- inflate(plain, br, raw, cv)
	}()
	out := &stickyWriter{w: w}
	var aw io.Writer = out
	if l, ok := w.(tarutil.Lender); ok {
		aw = &stickyLender{out, l}
	}
	st, err := align(aw, cv.idx, plain, cv.lim, cv.links.edit)
	if err == nil {
		err = cv.links.check()
	}
	plain.closeRead()
	if out.err != nil && cv.local == nil {
		close(abort)
	}
	e1, e2 := <-srcErr, <-decErr
	raw.release()
	plain.release()
	var after *afterData
	switch {
	case out.err != nil:
		// The cache's own error, naming its file: the file writer's goroutines report a
		// failed write at a later call, so the member being converted then may not be the
		// one whose bytes failed.
		return st, out.err
	case e1 != nil:
		return st, e1
	case err != nil && errors.As(e2, &after):
		return st, &debError{member: after.member, reason: err} // the cause, not what follows
	case errors.Is(e2, io.ErrUnexpectedEOF) && !errors.As(e2, new(*debError)) && errors.Is(err, tarutil.ErrTruncated):
		// A compressed tar that ended early, which the tar's reader saw as the archive
		// truncated, naming the member it was in (a .deb's error names its own member).
		return st, err
	case e2 != nil && e2 != errReaderGone:
		return st, e2
	}
	return st, err
}

// pump copies src into raw and, once raw's reader has stopped, reads the rest of src to
// its end, unless aborted.
func pump(raw *pipe, src io.Reader, abort <-chan struct{}) error {
	err := raw.fill(src)
	if err != errReaderGone {
		return err
	}
	buf := make([]byte, pipeChunkSize)
	for {
		select {
		case <-abort:
			return nil
		default:
		}
		if _, err := src.Read(buf); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// align writes the aligned form of the tar read from r to w, and its index to idx unless
// it is nil, each header passed to edit first (tarutil.AlignEdit), then reads the rest of r
// to its end, so that the decompressor checks its trailer.
func align(w, idx io.Writer, r io.Reader, lim tarutil.Limits, edit func(*tar.Header)) (tarutil.Stats, error) {
	st, err := tarutil.AlignEdit(w, idx, r, lim, edit)
	if err != nil {
		return st, err
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, maxTrailer+1))
	switch {
	case err != nil:
		return st, fmt.Errorf("after the tar: %w", err)
	case n > maxTrailer:
		return st, fmt.Errorf("more than %d bytes after the end of the tar", maxTrailer)
	}
	return st, nil
}

// streamReaders keeps the buffers in front of the decompressors for the process's next
// conversions.
var streamReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamBufSize) }}

// streamReader returns a pooled buffer of streamBufSize in front of r, which
// putStreamReader gives back.
func streamReader(r io.Reader) *bufio.Reader {
	br := streamReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putStreamReader(br *bufio.Reader) {
	br.Reset(nil)
	streamReaders.Put(br)
}
