package fetch

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"pkg/internal/termtext"
	"pkg/tarutil"
)

// A .deb is an ar archive (deb(5)): "debian-binary", "control.tar[.EXT]" and
// "data.tar[.EXT]" in that order, with members named "_..." allowed between them and
// ignored, and anything after data.tar ignored but a second data.tar. An ar archive is
// "!<arch>\n" then, for each member, a 60-byte header and the member's data, padded to
// an even length with "\n" (ar(5) of GNU binutils; deb(5)).
const (
	arMagic     = "!<arch>\n"
	arHeaderLen = 60
)

func isDeb(head []byte) bool { return bytes.HasPrefix(head, []byte(arMagic)) }

// maxDebianBinary bounds the debian-binary member, "2.0\n" in every .deb.
const maxDebianBinary = 64

// errDeb is what the error for a .deb whose ar structure or members pkg refuses is.
var errDeb = errors.New("fetch: malformed .deb")

// Reasons a .deb is refused, inside a debError.
var (
	errDebNoMagic     error = &reason{"no ar magic"}
	errDebHeader      error = &reason{"bad ar header"}
	errDebSize        error = &reason{"bad size"}
	errDebNoData      error = &reason{"no data.tar member"}
	errDebCompression error = &reason{"compression not supported"}
	errDebStranger    error = &reason{"not a member of a .deb (want control.tar, then data.tar)"}
	errDebOrder       error = &reason{"before the control.tar member"}
	errDebFirst       error = &reason{"first member not debian-binary"}
	errDebFormat      error = &reason{"format not 2.x"}
	errDebSecond      error = &reason{"a second data member"}
	errDebCutShort    error = &reason{"compressed tar cut short at the member's end"}
	errDebNoControl   error = &reason{"no control file"}
)

// debError is an error that is ErrDeb, naming the member concerned when there is one, its
// reason, what more is known of it, and the error that caused it, if any.
type debError struct {
	member string // "" for the archive as a whole
	reason error  // one of the errDeb*, or what refused the member: a tarutil error, a decompressor's, a tar reader's
	detail string // worded after the reason, its separator first: ": \"3.0\\n\""
	cause  error  // worded after the detail; nil for none
}

// debRefused is a debError for reason with the detail format makes, its separator first.
func debRefused(member string, reason error, format string, args ...any) *debError {
	return &debError{member: member, reason: reason, detail: fmt.Sprintf(format, args...)}
}

func (e *debError) Error() string {
	why := said(e.reason) + e.detail
	if e.cause != nil {
		why += ": " + e.cause.Error()
	}
	if e.member == "" {
		return "deb: " + why
	}
	return fmt.Sprintf("deb member %q: %s", e.member, why)
}

func (e *debError) Is(target error) bool { return target == errDeb }

func (e *debError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.reason}
	}
	return []error{e.reason, e.cause}
}

// arReader reads the members of an ar archive in order, front to back.
type arReader struct {
	r    *bufio.Reader
	left int64 // bytes of the current member not yet read
	pad  bool  // the current member is followed by a pad byte
	name string
}

// newArReader reads the magic of the ar archive r.
func newArReader(r *bufio.Reader) (*arReader, error) {
	magic := make([]byte, len(arMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != arMagic {
		return nil, &debError{reason: errDebNoMagic}
	}
	return &arReader{r: r}, nil
}

// next skips what is left of the current member and reads the next header, returning
// the member's name; io.EOF at the end of the archive.
func (a *arReader) next() (string, error) {
	if err := a.skip(); err != nil {
		return "", err
	}
	var h [arHeaderLen]byte
	n, err := io.ReadFull(a.r, h[:])
	switch {
	case n == 0 && err == io.EOF:
		return "", io.EOF
	case err != nil:
		return "", a.truncated(err)
	case string(h[58:60]) != "`\n":
		return "", debRefused("", errDebHeader, " after member %q", a.name)
	}
	// GNU ar ends a name with "/"; dpkg-deb pads it with spaces.
	name := strings.TrimSuffix(strings.TrimRight(string(h[0:16]), " "), "/")
	size, err := strconv.ParseInt(strings.TrimRight(string(h[48:58]), " "), 10, 64)
	if err != nil || size < 0 {
		return "", debRefused(name, errDebSize, " %q in its ar header", h[48:58])
	}
	a.name, a.left, a.pad = name, size, size%2 == 1
	return name, nil
}

// truncated reports the archive ending inside a header, or inside the current member.
func (a *arReader) truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &debError{member: a.name, reason: tarutil.ErrTruncated}
	}
	return err
}

// skip reads the rest of the current member and its pad byte.
func (a *arReader) skip() error {
	if _, err := io.Copy(io.Discard, a); err != nil {
		return err
	}
	if a.pad {
		a.pad = false
		if _, err := a.r.ReadByte(); err != nil {
			return a.truncated(err)
		}
	}
	return nil
}

// Read reads the data of the current member; io.EOF at its end.
func (a *arReader) Read(p []byte) (int, error) {
	if a.left == 0 {
		return 0, io.EOF
	}
	n, err := a.r.Read(p[:min(int64(len(p)), a.left)])
	a.left -= int64(n)
	if err != nil && (a.left > 0 || err != io.EOF) {
		return n, a.truncated(err)
	}
	return n, nil
}

// debMember is a .deb's member, one at a time: reads end at the end of the member.
type debMember struct {
	a    *arReader
	name string
	size int64
}

// openDeb reads a .deb's ar structure up to its data member and returns it, handing its
// control member, if want is not nil, to want. The members after the data member are
// checked by finishDeb.
func openDeb(r *bufio.Reader, want func(name string, r io.Reader) error) (*debMember, error) {
	a, err := newArReader(r)
	if err != nil {
		return nil, err
	}
	if err := debianBinary(a); err != nil {
		return nil, err
	}
	control := false
	for {
		name, err := a.next()
		if err == io.EOF {
			return nil, &debError{reason: errDebNoData}
		}
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "_") {
			continue
		}
		if is, known := compressedTar(name, "control.tar"); is && !control {
			if !known {
				return nil, &debError{member: name, reason: errDebCompression}
			}
			control = true
			if want != nil {
				if err := want(name, a); err != nil {
					return nil, err
				}
			}
			continue
		}
		is, known := compressedTar(name, "data.tar")
		switch {
		case !is:
			return nil, &debError{member: name, reason: errDebStranger}
		case !control:
			return nil, &debError{member: name, reason: errDebOrder}
		case !known:
			return nil, debRefused(name, errDebCompression, " (pkg reads %s)", orList(compressionNames()))
		}
		return &debMember{a: a, name: name, size: a.left}, nil
	}
}

// debianBinary reads the first member, the format version: 2.x.
func debianBinary(a *arReader) error {
	name, err := a.next()
	if err == io.EOF || err == nil && name != "debian-binary" {
		return debRefused("", errDebFirst, ": %q", name)
	}
	if err != nil {
		return err
	}
	v, err := io.ReadAll(io.LimitReader(a, maxDebianBinary))
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(v, []byte("2.")) || a.left > 0 {
		return debRefused(name, errDebFormat, ": %.16q", v)
	}
	return nil
}

func (d *debMember) Read(p []byte) (int, error) { return d.a.Read(p) }

// finish checks that no second data member follows; other members after it are ignored
// (deb(5)). The decompressor has read the data member to its end, refusing any bytes after
// its stream.
func (d *debMember) finish() error {
	for {
		name, err := d.a.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if is, _ := compressedTar(name, "data.tar"); is {
			return debRefused(name, errDebSecond, ", after %q", d.name)
		}
	}
}

// afterData is an error found after the data member of a .deb, which the error of a tar
// refused in that member, the cause, is reported instead of.
type afterData struct {
	member string
	err    error
}

func (e *afterData) Error() string { return e.err.Error() }
func (e *afterData) Unwrap() error { return e.err }

// inflateDeb decompresses the data member of the .deb in r into plain, setting
// *cv.control, if it is not nil, from the control member.
func inflateDeb(plain *pipe, r *bufio.Reader, cv conversion) error {
	var want func(string, io.Reader) error
	if ctl := cv.control; ctl != nil {
		want = func(name string, r io.Reader) (err error) {
			*ctl, err = readControl(name, r)
			return err
		}
	}
	d, err := openDeb(r, want)
	if err != nil {
		plain.closeWrite(err)
		return err
	}
	cv.links.deb.Store(true) // before the data member's first byte reaches the tar reader
	br := streamReader(d)
	defer putStreamReader(br)
	if err := inflateTar(plain, br, d); err != nil {
		var de *debError
		switch {
		case err == errReaderGone || errors.As(err, &de):
			return err
		case errors.Is(err, io.ErrUnexpectedEOF) && d.a.left == 0:
			return &debError{member: d.name, reason: errDebCutShort, detail: fmt.Sprintf(", %d bytes as its ar header declares", d.size), cause: err}
		}
		return &debError{member: d.name, reason: err}
	}
	if err := d.finish(); err != nil {
		return &afterData{d.name, err}
	}
	return nil
}

// debLinks makes the absolute symlinks of a .deb, whose members are paths from "/",
// relative to the link's directory as they pass (edit), so that they stay inside the root
// they are installed in; once the tar has passed, check refuses a link whose target's first
// component is not a top-level directory of the package: it leads out of what the package
// installs. Symlinks of other archives are left to the policy, which refuses absolute ones.
type debLinks struct {
	deb  atomic.Bool     // the archive is a .deb
	tops map[string]bool // top-level directories of the package, seen or implied
	made []relativeLink  // the links made relative, in member order
}

// relativeLink is a symlink debLinks made relative.
type relativeLink struct {
	raw    string // the member's name in the archive
	target string // its absolute target
	top    string // the target's first component
}

func newDebLinks() *debLinks { return &debLinks{tops: make(map[string]bool)} }

// edit notes the top-level directory hdr is or is in, and makes its target relative if it
// is an absolute symlink of a .deb.
func (d *debLinks) edit(hdr *tar.Header) {
	if !d.deb.Load() {
		return
	}
	top, nested := topOf(hdr.Name) // a name the policy refuses is refused after
	if top != "." && top != "" && (nested || hdr.Typeflag == tar.TypeDir) {
		d.tops[top] = true
	}
	if hdr.Typeflag != tar.TypeSymlink || !strings.HasPrefix(hdr.Linkname, "/") {
		return
	}
	name := path.Clean("/" + hdr.Name)[1:]
	if rel, first, ok := relativeTarget(name, hdr.Linkname); ok {
		d.made = append(d.made, relativeLink{raw: hdr.Name, target: hdr.Linkname, top: first})
		hdr.Linkname = rel
	}
}

// topOf returns the first component of a member's name, "./" and "/" prefixes aside, and
// whether more follows it.
func topOf(name string) (top string, nested bool) {
	for strings.HasPrefix(name, "./") || strings.HasPrefix(name, "/") {
		name = strings.TrimPrefix(strings.TrimPrefix(name, "."), "/")
	}
	top, _, nested = strings.Cut(name, "/")
	return top, nested
}

// check refuses the first link made relative whose target is in no top-level directory
// of the package, with the policy's error for an absolute target.
func (d *debLinks) check() error {
	for _, l := range d.made {
		if !d.tops[l.top] {
			return &tarutil.MemberError{Name: l.raw, Err: tarutil.Refused(tarutil.ErrSymlinkEscape, "absolute target %s, in none of the package's top-level directories",
				termtext.Quote(l.target))}
		}
	}
	return nil
}

// relativeTarget returns target, an absolute path, relative to the directory of the member
// name, through their common directories ("usr/lib/a/x" to "/usr/lib/b" is "../b"), and
// target's first component. A target with a ".." component, which the relative form could
// not keep the meaning of through a symlinked directory, or with none, gives ok false.
func relativeTarget(name, target string) (rel, top string, ok bool) {
	var to []string
	for c := range strings.SplitSeq(target, "/") {
		switch c {
		case "", ".":
		case "..":
			return "", "", false
		default:
			to = append(to, c)
		}
	}
	if len(to) == 0 {
		return "", "", false
	}
	var from []string
	if dir := path.Dir(name); dir != "." {
		from = strings.Split(dir, "/")
	}
	k := 0
	for k < len(from) && k < len(to) && from[k] == to[k] {
		k++
	}
	rel = strings.Repeat("../", len(from)-k) + strings.Join(to[k:], "/")
	switch {
	case rel == "":
		rel = "."
	case k == len(to): // target is an ancestor of the link: "../.."
		rel = strings.TrimSuffix(rel, "/")
	}
	if strings.HasSuffix(target, "/") {
		rel += "/"
	}
	return rel, to[0], true
}
