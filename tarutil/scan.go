package tarutil

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
)

// Scan reads the headers of an aligned tar from the start of r, skipping
// member data with Seek, validates every member against the same policy as
// Align, and returns the members in archive order with their data offsets.
// It refuses a member of Alignment bytes or more whose data is not aligned,
// and an archive that does not end with exactly two zero blocks.
func Scan(r io.ReadSeeker) ([]Member, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek to start of archive: %w", err)
	}
	s := &scanner{sr: &seekReader{rs: r, buf: make([]byte, scanBufSize)}, chk: newChecker(), dirs: make(map[string]int)}
	tr := tar.NewReader(s.sr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return s.members, s.checkEnd()
		}
		if err != nil {
			return nil, headerError(hdr, s.last, err)
		}
		if err := s.add(hdr); err != nil {
			return nil, err
		}
	}
}

// scanner collects the members of an aligned tar.
type scanner struct {
	sr      *seekReader
	chk     *checker
	members []Member
	dirs    map[string]int // index in members of each directory
	last    string         // name in the archive of the last entry read
	end     int64          // offset just past the last entry and its data
}

// add validates the entry hdr, just read, and notes where it ends.
func (s *scanner) add(hdr *tar.Header) error {
	m, ok, err := s.chk.check(hdr)
	if err != nil {
		return err
	}
	s.last, s.end = hdr.Name, s.sr.pos
	if !ok {
		// A directory written again, with its mode and time from the input; one implied
		// by the members under it (in a tar not written by Align) is not among members.
		if i, ok := s.dirs[m.Name]; ok {
			s.members[i].Mode, s.members[i].MTime = m.Mode, m.MTime
		}
		return nil
	}
	if m.Type == tar.TypeDir {
		s.dirs[m.Name] = len(s.members)
	}
	if m.Type == tar.TypeReg {
		m.Offset = s.sr.pos
		s.end += blockRound(m.Size)
	}
	if m.Size >= Alignment && m.Offset%Alignment != 0 {
		return &MemberError{Name: hdr.Name, Err: refusedf(ErrNotAligned, ": data at offset %d", m.Offset)}
	}
	s.members = append(s.members, m)
	return nil
}

// checkEnd refuses an archive whose last entry is not followed by exactly
// two zero blocks and the end of the file.
func (s *scanner) checkEnd() error {
	if s.sr.pos != s.end+2*blockSize || s.sr.zeros < 2*blockSize {
		return endError(s.last, ErrNoEnd)
	}
	var b [1]byte
	switch _, err := io.ReadFull(s.sr, b[:]); err {
	case io.EOF:
		return nil
	case nil:
		return endError(s.last, ErrTrailing)
	default:
		return fmt.Errorf("read end of archive: %w", err)
	}
}

// scanBufSize holds the headers of several members; a larger buffer would
// mostly read data Scan skips.
const scanBufSize = 16 << 10 // 16 KiB

// errSeek reports a seek seekReader does not support.
var errSeek = errors.New("tarutil: scan seeks only forward from the current position")

// seekReader buffers reads from an io.ReadSeeker and counts its position.
// Its Seek skips forward within the buffer or else seeks rs, so tar.Reader
// skips member data without reading it.
type seekReader struct {
	rs    io.ReadSeeker
	buf   []byte
	r, w  int   // unread bytes are buf[r:w]
	pos   int64 // offset of the next byte Read returns
	zeros int64 // zero bytes Read returned last, none skipped since
}

func (s *seekReader) Read(p []byte) (int, error) {
	if s.r == s.w {
		if len(p) >= len(s.buf) {
			n, err := s.rs.Read(p)
			s.pos += int64(n)
			s.zeros = zeroRun(s.zeros, p[:n])
			return n, err
		}
		n, err := s.rs.Read(s.buf)
		s.r, s.w = 0, n
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, s.buf[s.r:s.w])
	s.r += n
	s.pos += int64(n)
	s.zeros = zeroRun(s.zeros, p[:n])
	return n, nil
}

// Seek supports only whence io.SeekCurrent with offset >= 0.
func (s *seekReader) Seek(offset int64, whence int) (int64, error) {
	if whence != io.SeekCurrent || offset < 0 {
		return s.pos, errSeek
	}
	if buffered := int64(s.w - s.r); offset <= buffered {
		s.r += int(offset)
	} else {
		if _, err := s.rs.Seek(offset-buffered, io.SeekCurrent); err != nil {
			return s.pos, err
		}
		s.r, s.w = 0, 0
	}
	s.pos += offset
	if offset > 0 {
		s.zeros = 0
	}
	return s.pos, nil
}
