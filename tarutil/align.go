package tarutil

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"io/fs"

	"pkg/internal/termtext"
)

// Align reads the tar stream r, validates every member against the policy,
// and writes the aligned form to w. It returns on the first refused member,
// naming it. Data offsets count from the first byte written to w. Missing
// parent directories are written before the member that needs them, with
// mode 0755 and that member's modification time. A stream that ends before
// its end-of-archive blocks is refused as truncated. After an error, what
// was written to w is not a valid archive. The sha256 of every regular
// member's data is computed as it is copied. r is read through a pooled
// buffer unless it has a ReadByte method, the mark of a buffered reader. An
// archive past a limit of lim is refused at the first member past it, before its
// data is copied.
func Align(w io.Writer, r io.Reader, lim Limits) (Stats, error) {
	return align(w, nil, r, lim, nil)
}

// AlignEdit is Align writing, unless idx is nil, the index of the aligned tar to idx as the
// members pass, instead of listing them in Stats.Members, so that it holds no member list
// however many members the archive has (after an error, what was written to idx is not a
// valid index); and calling edit, unless it is nil, with every header before the policy
// checks it: a format whose archives mean what the policy refuses (a .deb's absolute
// symlinks into its own tree) rewrites it there, in the one pass.
func AlignEdit(w, idx io.Writer, r io.Reader, lim Limits, edit func(*tar.Header)) (Stats, error) {
	var iw *indexWriter
	if idx != nil {
		iw = newIndexWriter(idx)
		defer iw.release()
	}
	return align(w, iw, r, lim, edit)
}

func align(w io.Writer, idx *indexWriter, r io.Reader, lim Limits, edit func(*tar.Header)) (Stats, error) {
	c := &converter{enc: newEncoder(w), chk: newChecker(), lim: lim, idx: idx, edit: edit, dirs: make(map[string]dirWritten)}
	defer c.enc.release()
	c.data.h = sha256.New()
	c.in.r = r
	// As compress/flate does, take a reader with ReadByte to be buffered already: a second
	// buffer would copy headers and small members once more.
	if _, ok := r.(io.ByteReader); !ok {
		br := readerPool.Get().(*bufio.Reader)
		br.Reset(r)
		defer func() {
			br.Reset(nil)
			readerPool.Put(br)
		}()
		c.in.r = br
	}
	tr := tar.NewReader(&c.in)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return c.finish()
		}
		if err != nil {
			return Stats{}, headerError(hdr, c.last, err)
		}
		if err := c.convert(hdr, tr); err != nil {
			return Stats{}, err
		}
	}
}

// converter turns the members of one tar stream into an aligned tar.
type converter struct {
	in    countReader
	enc   *encoder
	chk   *checker
	data  hashReader // member data on its way to enc
	lim   Limits
	idx   *indexWriter      // where members go, if not to stats.Members
	edit  func(*tar.Header) // called with each header before it is checked, if not nil
	stats Stats
	dirs  map[string]dirWritten // every directory written
	last  string                // name in the archive of the last entry read
	end   int64                 // input offset just past the last entry and its data
}

// dirWritten is the mode and time the converter last wrote for a directory.
type dirWritten struct {
	mode  fs.FileMode
	mtime int64
}

// hashReader hashes what is read through it.
type hashReader struct {
	r io.Reader
	h hash.Hash
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}

// countReader counts the bytes read through it and the zero bytes among
// the last of them.
type countReader struct {
	r     io.Reader
	n     int64
	zeros int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.zeros = zeroRun(c.zeros, p[:n])
	return n, err
}

// zeroRun returns the length of the run of zero bytes that ends p, given
// the length of the run that ended the bytes before p.
func zeroRun(run int64, p []byte) int64 {
	i := len(p)
	for i > 0 && p[i-1] == 0 {
		i--
	}
	if i == 0 {
		return run + int64(len(p))
	}
	return int64(len(p) - i)
}

// finish checks that the input ended with its end-of-archive blocks and
// ends the output. archive/tar also reports the end of the archive at an
// end of file after a header, or after one zero block.
func (c *converter) finish() (Stats, error) {
	if c.in.n != c.end+2*blockSize || c.in.zeros < 2*blockSize {
		return Stats{}, endError(c.last, refusedf(ErrTruncated, " before its end-of-archive blocks"))
	}
	if err := c.enc.finish(); err != nil {
		return Stats{}, fmt.Errorf("write end of archive: %w", err)
	}
	if c.idx != nil {
		if err := c.idx.finish(c.enc.out.off); err != nil {
			return Stats{}, fmt.Errorf("write index: %w", err)
		}
	}
	return c.stats, nil
}

// convert validates the member hdr and writes it, after the parent
// directories it needs.
func (c *converter) convert(hdr *tar.Header, data io.Reader) error {
	if c.edit != nil {
		c.edit(hdr)
	}
	m, ok, err := c.chk.check(hdr)
	if err != nil || !ok {
		c.last, c.end = hdr.Name, c.in.n
		if err == nil && m.Name != "" { // a directory again
			return c.again(&m, hdr.Name)
		}
		return err
	}
	if err := c.limit(&m, hdr.Name); err != nil {
		return err
	}
	for _, dir := range c.chk.parents {
		d := Member{Name: dir, Type: tar.TypeDir, Mode: 0o755, MTime: m.MTime}
		if err := c.write(&d, dir, nil); err != nil {
			return err
		}
	}
	c.last, c.end = hdr.Name, c.in.n+blockRound(m.Size)
	return c.write(&m, hdr.Name, data)
}

// again writes the directory m, named raw in the archive and written before (as a parent
// made up for an earlier member, say), once more when its mode or time differ, so that tar
// extracts it as the input has it; the member takes them too.
func (c *converter) again(m *Member, raw string) error {
	earlier := c.dirs[m.Name] // every directory the checker has seen was written
	if earlier.mode == m.Mode && earlier.mtime == m.MTime {
		return nil
	}
	if err := c.enc.writeHeader(m); err != nil {
		return fmt.Errorf("write member %s: %w", termtext.Quote(raw), err)
	}
	c.dirs[m.Name] = dirWritten{m.Mode, m.MTime}
	if c.idx != nil {
		c.idx.add(m, true)
	} else {
		i := c.chk.index(m.Name) // the checker records each member as it is written
		c.stats.Members[i].Mode, c.stats.Members[i].MTime = m.Mode, m.MTime
	}
	return nil
}

// limit refuses m, named raw in the archive, if it takes the archive past c.lim.
func (c *converter) limit(m *Member, raw string) error {
	files, bytes := c.stats.Files, c.stats.Bytes+m.Size
	if m.Type != tar.TypeDir {
		files++
	}
	switch {
	case c.lim.Files > 0 && files > c.lim.Files:
		return &MemberError{Name: raw, Err: limitError("files", int64(c.lim.Files), "more than %d files", c.lim.Files)}
	case c.lim.Bytes > 0 && bytes > c.lim.Bytes:
		return &MemberError{Name: raw, Err: limitError("bytes", c.lim.Bytes, "files past %d bytes in all", c.lim.Bytes)}
	}
	return nil
}

// write writes the header of m and, for a regular member, its data from r.
// Errors name the member as raw, its name in the archive.
func (c *converter) write(m *Member, raw string, r io.Reader) error {
	if err := c.enc.writeHeader(m); err != nil {
		return fmt.Errorf("write member %s: %w", termtext.Quote(raw), err)
	}
	if m.Type == tar.TypeReg {
		m.Offset = c.enc.out.off
		c.data.r = r
		c.data.h.Reset()
		var err error
		if m.Size >= copyBufSize {
			err = c.enc.copyLarge(r, m.Size, c.data.h)
		} else {
			err = c.enc.copyData(&c.data, m.Size)
		}
		if err != nil {
			return c.dataError(raw, err)
		}
		c.data.h.Sum(m.SHA256[:0])
	}
	if m.Type == tar.TypeDir {
		c.dirs[m.Name] = dirWritten{m.Mode, m.MTime}
	} else {
		c.stats.Files++
	}
	if c.idx != nil {
		c.idx.add(m, false)
	} else {
		c.stats.Members = append(c.stats.Members, *m)
	}
	c.stats.Bytes += m.Size
	return nil
}

// dataError tells an error writing member data from one reading it.
func (c *converter) dataError(raw string, err error) error {
	switch {
	case c.enc.out.err != nil:
		return fmt.Errorf("write member %s: %w", termtext.Quote(raw), err)
	}
	return readError(atMember, raw, err)
}
