package fetch

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"pkg/tarutil"
)

// A zip starts with a local file header, or, empty, with the end of its central directory
// (APPNOTE.TXT 4.3.7, 4.3.16).
var (
	magicZip      = []byte("PK\x03\x04")
	magicZipEmpty = []byte("PK\x05\x06")
)

func isZip(head []byte) bool {
	return bytes.HasPrefix(head, magicZip) || bytes.HasPrefix(head, magicZipEmpty)
}

// The creators whose external attributes hold a Unix mode in their upper 16 bits
// (APPNOTE.TXT 4.4.2), and the file types of that mode (inode(7)).
const (
	creatorUnix  = 3
	creatorMacOS = 19

	modeType = 0o170000
	modeReg  = 0o100000
	modeDir  = 0o040000
	modeLink = 0o120000
	modeFIFO = 0o010000
	modeChar = 0o020000
	modeBlk  = 0o060000
)

// maxZipLink bounds the data of a symlink member read as its target: one byte over what
// tarutil accepts, which then refuses it.
const maxZipLink = 4096

// errZipEncrypted refuses an encrypted zip member, which pkg cannot read.
var errZipEncrypted error = &reason{"encrypted"}

// zipError reports a zip member that cannot be read: the policy's refusals are
// *tarutil.MemberError, as a tar's.
type zipError struct {
	member string
	err    error
}

func (e *zipError) Error() string {
	return fmt.Sprintf("zip member %q: %s", e.member, zipSaid(e.err))
}

func (e *zipError) Unwrap() error { return e.err }

// zipSaid words archive/zip's errors that reading a member returns without their "zip: "
// prefix, as a zipError says them after the member's name, and any other as said does. A
// switch, not a map: hashing an error of a type that cannot be a map key panics.
func zipSaid(err error) string {
	switch err {
	case zip.ErrFormat:
		return "not a valid zip file"
	case zip.ErrAlgorithm:
		return "unsupported compression algorithm"
	case zip.ErrChecksum:
		return "checksum error"
	}
	return said(err)
}

// inflateZip writes the members of the zip in r into plain as a tar.
//
// A zip is the one archive pkg stages on disk: the modes of its members, and which are
// directories and symlinks, are in the central directory at its end (APPNOTE.TXT 4.3.12),
// so it cannot be converted as it arrives. It is written whole into cv.tmp (the archive
// verified as it is written: r returns the verifier's error at its end), read from there
// and removed. An archive that is a local file already (cv.local) is read in place.
func inflateZip(plain *pipe, r *bufio.Reader, cv conversion) error {
	f, size, done, err := stageZip(r, cv)
	if err != nil {
		plain.closeWrite(err)
		return err
	}
	defer done()
	zr, err := zip.NewReader(f, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // tarutil refuses such names, naming them
		plain.closeWrite(err) // archive/zip's, which says "zip: " once
		return err
	}
	return fillZip(plain, zr)
}

// stageZip writes r into a temporary file of cv.tmp, unless the archive is cv.local, and
// returns the file, its size and what removes it.
func stageZip(r io.Reader, cv conversion) (io.ReaderAt, int64, func(), error) {
	if cv.local != nil {
		info, err := cv.local.f.Stat()
		if err != nil {
			return nil, 0, nil, err
		}
		return cv.local, info.Size(), func() {}, nil
	}
	f, err := os.CreateTemp(cv.tmp, "zip-*")
	if err != nil {
		return nil, 0, nil, err
	}
	done := func() { f.Close(); os.Remove(f.Name()) }
	// Held until removed: the mark of a temporary file in use (removeTemporary).
	unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	n, err := io.Copy(f, r)
	if err != nil {
		done()
		return nil, 0, nil, err
	}
	return f, n, done, nil
}

// fillZip writes the members of zr into plain as a tar, from a goroutine of its own.
func fillZip(plain *pipe, zr *zip.Reader) error {
	pr, pw := io.Pipe()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		bw := bufio.NewWriterSize(pw, pipeChunkSize)
		err := zipTar(bw, zr)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	err := plain.fill(pr)
	pr.CloseWithError(errReaderGone) // stops the writer, if still writing
	<-wrote
	return err
}

// zipTar writes the members of zr to w as a tar, in the order of its central directory.
func zipTar(w io.Writer, zr *zip.Reader) error {
	tw := tar.NewWriter(w)
	for _, f := range zr.File {
		if err := zipMember(tw, f); err != nil {
			return err
		}
	}
	return tw.Close()
}

// zipMember writes f to tw: a regular file with its data, a directory, or a symlink whose
// data is its target.
func zipMember(tw *tar.Writer, f *zip.File) error {
	hdr, err := zipHeader(f)
	if err != nil {
		return err
	}
	if f.Flags&0x1 != 0 { // APPNOTE.TXT 4.4.4, bit 0
		return &zipError{f.Name, errZipEncrypted}
	}
	var rc io.ReadCloser
	if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeSymlink {
		if rc, err = f.Open(); err != nil {
			return &zipError{f.Name, err}
		}
		defer rc.Close()
	}
	if hdr.Typeflag == tar.TypeSymlink {
		target, err := io.ReadAll(io.LimitReader(rc, maxZipLink))
		if err != nil {
			return &zipError{f.Name, err}
		}
		hdr.Linkname = string(target)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return &zipError{f.Name, err}
	}
	if hdr.Typeflag == tar.TypeReg {
		// archive/zip refuses data longer than the size, and checks the CRC-32 at its end.
		if _, err := io.Copy(tw, rc); err != nil {
			return &zipError{f.Name, err}
		}
	}
	return nil
}

// zipTime is f's modification time as unzip (Info-ZIP) sets it. The two read MS-DOS times
// alike, out-of-range fields carrying over, but for a month of 0, which unzip takes as
// January and archive/zip as the December before: Go's module zips, whose dates are all 0,
// would be a month off (1979-11-30 for 1979-12-31). A time from an extra field stands.
func zipTime(f *zip.File) time.Time {
	d, t := f.ModifiedDate, f.ModifiedTime
	at := func(month time.Month) time.Time {
		return time.Date(int(d>>9)+1980, month, int(d&0x1f), int(t>>11), int(t>>5&0x3f), int(t&0x1f)*2, 0, time.UTC)
	}
	if d>>5&0xf == 0 && f.Modified.Equal(at(0)) {
		return at(time.January)
	}
	return f.Modified
}

// zipHeader is the tar header of f. A member made on Unix (its creator Unix or macOS, and
// a mode in its external attributes) keeps its mode: file type and permission bits, which
// tarutil then checks like a tar's. Others record no Unix mode: their directories (names
// ending in "/") get 0755, their files 0644, as unzip gives them under umask 022.
func zipHeader(f *zip.File) (*tar.Header, error) {
	if f.UncompressedSize64 > math.MaxInt64 {
		return nil, &tarutil.MemberError{Name: f.Name, Err: tarutil.Refused(tarutil.ErrLimit, "%d bytes", f.UncompressedSize64)}
	}
	hdr := &tar.Header{Name: f.Name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(f.UncompressedSize64),
		ModTime: zipTime(f), Format: tar.FormatPAX}
	dir := len(f.Name) > 0 && f.Name[len(f.Name)-1] == '/'
	mode := f.ExternalAttrs >> 16
	if c := f.CreatorVersion >> 8; c != creatorUnix && c != creatorMacOS || mode == 0 {
		if dir {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
		}
		return hdr, nil
	}
	hdr.Mode = int64(mode & 0o7777)
	switch mode & modeType {
	case modeReg, 0:
		if dir {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
	case modeDir:
		hdr.Typeflag, hdr.Size = tar.TypeDir, 0
	case modeLink:
		hdr.Typeflag, hdr.Size = tar.TypeSymlink, 0
	case modeFIFO:
		hdr.Typeflag, hdr.Size = tar.TypeFifo, 0
	case modeChar:
		hdr.Typeflag, hdr.Size = tar.TypeChar, 0
	case modeBlk:
		hdr.Typeflag, hdr.Size = tar.TypeBlock, 0
	default:
		return nil, &tarutil.MemberError{Name: f.Name, Err: tarutil.Refused(tarutil.ErrType, "a socket")}
	}
	return hdr, nil
}
