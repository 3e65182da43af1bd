// Package tarutil converts tar streams into aligned tars and scans them.
//
// An aligned tar is a POSIX pax archive in which the data of every regular
// member of Alignment bytes or more starts at a multiple of Alignment from the
// start of the file, so an installer can clone it out of the file. The padding
// is a pax comment record, which every tar reader ignores, so an aligned tar
// extracts unchanged with any tar.
//
// Align and Scan refuse the same members (see the Err variables). The package
// knows nothing of packages, compression or the filesystem.
package tarutil

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"pkg/internal/termtext"
)

// Alignment is the boundary member data of Alignment bytes or more starts on.
const Alignment = 4096

// Limits on untrusted archives.
const (
	maxPathLen = 4095           // bytes in a member name or hardlink target: Linux's PATH_MAX, less its NUL
	maxNameLen = 255            // bytes in a component of a member name: Linux's NAME_MAX
	maxLinkLen = 1023           // bytes in a symlink target: XFS's limit (ext4 with 4 KiB blocks and btrfs take 4,095)
	maxDepth   = 256            // components in a member name
	maxMembers = 1 << 20        // members of an archive, synthesized directories included
	maxEntries = 2 * maxMembers // headers in an archive, skipped ones included
	maxBytes   = 256 << 30      // 256 GiB: data of the regular members of an archive
	// 64 MiB: names and link targets of all members together, synthesized directories
	// included; what every stage holds in memory for each member. A Linux source tree's
	// take about 5 MB.
	maxNameBytes = 64 << 20
)

// Member is one validated entry of an aligned tar.
type Member struct {
	Name     string      // slash-separated, relative, cleaned: no "./", no trailing "/", never "."
	Type     byte        // tar.TypeReg, tar.TypeDir, tar.TypeSymlink or tar.TypeLink
	Mode     fs.FileMode // permission bits only
	Size     int64       // data bytes of a regular member, else 0
	Offset   int64       // offset of a regular member's data in the tar, else 0
	Linkname string      // symlink target as written; hardlink target as a cleaned member Name
	MTime    int64       // modification time in Unix seconds, all that Align writes and an index keeps
	SHA256   [32]byte    // digest of a regular member's data, when known (Align, ReadIndex)
}

// Tail returns where the bytes of a regular member's data that no clone of whole blocks of
// the aligned tar covers begin in the tar, and how many there are: all of a file under
// Alignment (whose data need not start on a block), the last partial block of a larger
// one; none when its data end on a block.
func (m *Member) Tail() (off, n int64) {
	switch {
	case m.Type != tar.TypeReg:
		return m.Offset, 0
	case m.Size < Alignment:
		return m.Offset, m.Size
	}
	whole := m.Size &^ (Alignment - 1)
	return m.Offset + whole, m.Size - whole
}

// MaxInline is btrfs's default max_inline: a file of at most so many bytes keeps them in
// the filesystem's metadata (an inline extent), which a clone to an offset past 0 copies
// into the page cache; a longer file's last block is a data block of its own, which a
// clone shares wherever it goes. Caches on btrfs keep the tails over it as files of their
// own (fetch), which installs clone (install).
const MaxInline = 2048

// SharedTail reports whether a cache on btrfs keeps m's tail, where it has one, as a file
// of its own (fetch) and an install clones it from there (install): a tail over MaxInline,
// and, in an entry of few files with data (at most durable.MaxTracked), a member under a
// block, whose clone into a new file at offset 0 copies its inline extent or shares its block.
func SharedTail(m *Member, fewFiles bool) bool {
	_, n := m.Tail()
	return n > MaxInline || fewFiles && m.Size < Alignment
}

// DataFiles counts the regular members with data.
func DataFiles(members []Member) int {
	n := 0
	for i := range members {
		if members[i].Type == tar.TypeReg && members[i].Size > 0 {
			n++
		}
	}
	return n
}

// Stats describes a converted archive.
type Stats struct {
	Files   int      // members that are not directories
	Bytes   int64    // sum of regular members' sizes
	Members []Member // as Scan would return them, with their data's digests
}

// Limits bounds what Align accepts from an archive; a zero field is no limit.
type Limits struct {
	Bytes int64 // sum of regular members' sizes
	Files int   // members that are not directories
}

// Reasons a member is refused, reported inside a *MemberError.
var (
	ErrUnsafePath    error = &reason{"path escapes the package"}
	ErrName          error = &reason{"invalid name"}
	ErrType          error = &reason{"unsupported member type"}
	ErrDuplicate     error = &reason{"duplicate path"}
	ErrParent        error = &reason{"parent is not a directory"}
	ErrSymlinkEscape error = &reason{"symlink target outside the package"}
	ErrHardlink      error = &reason{"invalid hardlink"}
	ErrSpecialBits   error = &reason{"setuid, setgid or sticky bit not allowed"}
	ErrXattr         error = &reason{"extended attributes not allowed"}
	ErrSparse        error = &reason{"sparse members not supported"}
	ErrLimit         error = &reason{"limit exceeded"}
	ErrNotAligned    error = &reason{"member data not aligned"}
)

// Reasons an archive's stream is refused, reported with where it was read.
var (
	ErrTruncated error = &reason{"archive truncated"}
	ErrNoEnd     error = &reason{"not two zero blocks"}
	ErrTrailing  error = &reason{"data after the end-of-archive blocks"}
)

// A reason is one of the package's sentinels: its Error has the package's prefix, as a
// sentinel alone is said; a *MemberError, and where a stream was refused, say its text
// alone (Said).
type reason struct{ text string }

// reasonPrefix is what a reason's Error says before its text: the package's name, as a
// sentinel's error carries it (STYLE).
const reasonPrefix = "tarutil: "

func (r *reason) Error() string { return reasonPrefix + r.text }

// A refusal is a reason with what more is known, worded after it, and the error that
// caused it, if any.
type refusal struct {
	reason error
	detail string // its separator first: ": absolute path", " (mode 04755)"
	cause  error
}

// refusedf is reason with the detail format makes, its separator first.
func refusedf(reason error, format string, args ...any) error {
	return &refusal{reason: reason, detail: fmt.Sprintf(format, args...)}
}

// Refused returns reason, one of the Err* sentinels, with what more is known, for a
// *MemberError: "symlink target outside the package: absolute target \"/x\"".
func Refused(reason error, format string, args ...any) error {
	return refusedf(reason, ": "+format, args...)
}

func (e *refusal) Error() string { return e.reason.Error() + e.detail }

func (e *refusal) Unwrap() []error {
	if e.cause == nil {
		return []error{e.reason}
	}
	return []error{e.reason, e.cause}
}

// Said words err as a *MemberError, and where a stream was refused, say it: a reason of
// the package, and what is worded after it, without the package's prefix; any other error
// as its Error does. An error that wraps one of the package's says it so.
func Said(err error) string {
	switch e := err.(type) {
	case *reason:
		return e.text
	case *refusal:
		return Said(e.reason) + e.detail
	case *LimitError:
		return Said(ErrLimit) + ": " + e.detail
	case *FoldedError:
		return Said(ErrFolded) + e.detail()
	}
	return err.Error()
}

// LimitError is a refusal for passing one of the limits of docs/archives.md's table; it
// is ErrLimit. Limit names which, Max is its value.
type LimitError struct {
	Limit  string // "entries", "file bytes", "name bytes", "members", "path length", "path depth", "component length", "symlink length", "files" or "bytes"
	Max    int64
	detail string // the refusal as worded after ErrLimit's text
}

func limitError(limit string, max int64, format string, args ...any) *LimitError {
	return &LimitError{Limit: limit, Max: max, detail: fmt.Sprintf(format, args...)}
}

func (e *LimitError) Error() string        { return ErrLimit.Error() + ": " + e.detail }
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// MemberError reports a member refused by the policy.
type MemberError struct {
	Name string // the member's name as it appears in the archive
	Err  error  // one of the Err* sentinels, or one with what more is known (Refused, *LimitError, *FoldedError)
}

func (e *MemberError) Error() string {
	return fmt.Sprintf("member %s: %s", termtext.Quote(e.Name), Said(e.Err))
}

func (e *MemberError) Unwrap() error { return e.Err }

// reasonError is one of this package's reasons (ErrDamaged, ErrIndex) with its detail,
// worded without the package's name, as MemberError words its reason.
type reasonError struct {
	reason error
	text   string
}

func (e *reasonError) Error() string { return e.text }
func (e *reasonError) Unwrap() error { return e.reason }

// damagedf is an ErrDamaged saying what differs.
func damagedf(format string, args ...any) error {
	return &reasonError{ErrDamaged, "archive does not match its index: " + fmt.Sprintf(format, args...)}
}

// indexf is an ErrIndex saying what is wrong with the index.
func indexf(format string, args ...any) error {
	return &reasonError{ErrIndex, "index damaged: " + fmt.Sprintf(format, args...)}
}

// headerError gives an error from tar.Reader.Next its context: the member
// read last, and whether the archive ended early.
func headerError(hdr *tar.Header, last string, err error) error {
	if hdr != nil && errors.Is(err, tar.ErrInsecurePath) {
		return &MemberError{Name: hdr.Name, Err: ErrUnsafePath}
	}
	return readError(atHeader, last, err)
}

// readError reports err from reading the archive at at, of or after member; an
// early end of the input is ErrTruncated.
func readError(at streamPlace, member string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = &refusal{reason: ErrTruncated, detail: ": " + Said(err), cause: err}
	}
	return &streamError{at: at, member: member, err: err}
}

// endError reports reason (ErrTruncated, ErrNoEnd, ErrTrailing) at the end of
// an archive whose last entry is last.
func endError(last string, reason error) error {
	return &streamError{at: atEnd, member: last, err: reason}
}

// streamPlace is where in an archive a streamError was found.
type streamPlace int

const (
	atHeader streamPlace = iota // reading the header after member, or the first
	atMember                    // reading member's data
	atEnd                       // at the end of the archive, after member, or of an empty one
)

// streamError is a problem found at a place in the archive, worded as
// MemberError is, without the reason's package prefix.
type streamError struct {
	at     streamPlace
	member string // the member read, or the last one before; "" for none
	err    error
}

func (e *streamError) Error() string {
	var where string
	switch {
	case e.at == atMember:
		where = "read member " + termtext.Quote(e.member)
	case e.at == atHeader && e.member == "":
		where = "read first header"
	case e.at == atHeader:
		where = "read header after member " + termtext.Quote(e.member)
	case e.member == "":
		where = "end of empty archive"
	default:
		where = "end of archive after member " + termtext.Quote(e.member)
	}
	return where + ": " + Said(e.err)
}

func (e *streamError) Unwrap() error { return e.err }
