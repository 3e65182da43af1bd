package tarutil

import (
	"archive/tar"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"pkg/internal/termtext"
)

// specialBits are the setuid, setgid and sticky bits of a tar mode field.
const specialBits = 0o7000

// checker applies the member policy to the headers of one archive, in order.
type checker struct {
	paths   pathSet  // every path seen or synthesized, by cleaned name
	parents []string // ancestors of the last member not seen before, outermost first
	entries int      // headers checked, skipped ones included
	bytes   int64    // data of the regular members
	names   int      // bytes of the names and link targets of the members checked
}

func newChecker() *checker {
	return &checker{}
}

// index returns the position of name, a path seen, among the members recorded, parents
// synthesized for them included.
func (c *checker) index(name string) int {
	n, _, _ := c.paths.find(name)
	return n
}

// kind returns the type of name, 0 if it was not seen.
func (c *checker) kind(name string) (byte, bool) {
	_, typ, ok := c.paths.find(name)
	return typ, ok
}

// check validates hdr. It returns ok false, and no error, for entries that
// are skipped: pax global headers, the root directory and directories
// already seen. For the last it returns the member (its Name set: again),
// whose mode and time are to replace the earlier ones, as tar's extraction does.
func (c *checker) check(hdr *tar.Header) (m Member, ok bool, err error) {
	c.parents = c.parents[:0]
	if c.entries++; c.entries > maxEntries {
		return Member{}, false, &MemberError{Name: hdr.Name, Err: limitError("entries", maxEntries, "more than %d entries", maxEntries)}
	}
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return Member{}, false, nil
	}
	m, ok, err = c.validate(hdr)
	if err != nil {
		return Member{}, false, &MemberError{Name: hdr.Name, Err: err}
	}
	return m, ok, nil
}

func (c *checker) validate(hdr *tar.Header) (Member, bool, error) {
	name, err := cleanName(hdr.Name)
	if err != nil {
		return Member{}, false, err
	}
	typ, err := memberType(hdr.Typeflag)
	if err != nil {
		return Member{}, false, err
	}
	skip, err := c.skip(name, typ)
	if err != nil || skip && name == "." {
		return Member{}, false, err
	}
	if err := checkAttrs(hdr); err != nil {
		return Member{}, false, err
	}
	if skip { // a directory again
		return Member{Name: name, Type: typ, Mode: fs.FileMode(hdr.Mode & 0o777), MTime: hdr.ModTime.Unix()}, false, nil
	}
	if err := c.findParents(name); err != nil {
		return Member{}, false, err
	}
	m, err := c.member(hdr, name, typ)
	if err != nil {
		return Member{}, false, err
	}
	if m.Size < 0 || m.Size > maxBytes-c.bytes { // c.bytes+m.Size could overflow
		return Member{}, false, limitError("file bytes", maxBytes, "more than %d bytes of file data", int64(maxBytes))
	}
	c.bytes += m.Size
	if err := c.countNames(&m); err != nil {
		return Member{}, false, err
	}
	c.record(name, typ)
	return m, true, nil
}

// skip reports whether a member is the root directory or a directory seen
// before, and refuses any other member at the root or at a path seen before.
func (c *checker) skip(name string, typ byte) (bool, error) {
	if name == "." {
		if typ != tar.TypeDir {
			return false, refusedf(ErrUnsafePath, ": the package root as a %s", kindName(typ))
		}
		return true, nil
	}
	prev, seen := c.kind(name)
	if !seen {
		return false, nil
	}
	if prev == tar.TypeDir && typ == tar.TypeDir {
		return true, nil
	}
	return false, refusedf(ErrDuplicate, ": %s is already a %s", termtext.Quote(name), kindName(prev))
}

// member builds the Member for a validated name and type, checking links.
func (c *checker) member(hdr *tar.Header, name string, typ byte) (Member, error) {
	m := Member{Name: name, Type: typ, Mode: fs.FileMode(hdr.Mode & 0o777), MTime: hdr.ModTime.Unix()}
	var err error
	switch typ {
	case tar.TypeReg:
		m.Size = hdr.Size
	case tar.TypeSymlink:
		m.Linkname, err = checkSymlink(name, hdr.Linkname)
	case tar.TypeLink:
		m.Linkname, err = c.checkHardlink(hdr)
	}
	return m, err
}

// countNames refuses m, and the parents it needs, once the names and link targets of the
// archive pass maxNameBytes.
func (c *checker) countNames(m *Member) error {
	c.names += len(m.Name) + len(m.Linkname)
	for _, dir := range c.parents {
		c.names += len(dir)
	}
	if c.names > maxNameBytes {
		return limitError("name bytes", maxNameBytes, "more than %d bytes of member names and link targets (%d MiB)", maxNameBytes, maxNameBytes>>20)
	}
	return nil
}

// record notes name and the parents it needed.
func (c *checker) record(name string, typ byte) {
	for _, dir := range c.parents {
		c.paths.add(dir, tar.TypeDir)
	}
	c.paths.add(name, typ)
}

// findParents sets c.parents to the ancestors of name not seen yet and
// refuses a name under anything but a directory.
func (c *checker) findParents(name string) error {
	for dir := Parent(name); dir != "."; dir = Parent(dir) {
		kind, seen := c.kind(dir)
		if seen && kind != tar.TypeDir {
			return refusedf(ErrParent, ": %s is a %s", termtext.Quote(dir), kindName(kind))
		}
		if seen {
			break
		}
		c.parents = append(c.parents, dir)
	}
	slices.Reverse(c.parents)
	if c.paths.len()+len(c.parents) >= maxMembers {
		return limitError("members", maxMembers, "more than %d members", maxMembers)
	}
	return nil
}

// Parent returns the directory of name, a clean relative path (a member's name, or a path
// made of such names), as path.Dir does without its pass of path.Clean over name.
func Parent(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return path.Dir(name)
}

// cleanName returns the cleaned form of a member name, or why it is refused: only "./"
// prefixes, repeated and trailing slashes and "." components are cleaned away; a ".."
// component is refused wherever it is.
func cleanName(raw string) (string, error) {
	if err := checkText(raw); err != nil {
		return "", refusedf(ErrName, ": %s", err)
	}
	if err := checkWindows(raw); err != nil {
		return "", refusedf(ErrUnsafePath, ": %s", err)
	}
	if raw[0] == '/' {
		return "", refusedf(ErrUnsafePath, ": absolute path")
	}
	s := scanName(raw)
	if s.dotDot {
		return "", ErrUnsafePath
	}
	name := raw
	if !s.clean {
		name = path.Clean(raw)
		s = scanName(name)
	}
	if len(name) > maxPathLen {
		return "", limitError("path length", maxPathLen, "path longer than %d bytes", maxPathLen)
	}
	if s.slashes >= maxDepth {
		return "", limitError("path depth", maxDepth, "path deeper than %d components", maxDepth)
	}
	if s.longest > maxNameLen {
		return "", limitError("component length", maxNameLen, "a path component longer than %d bytes, which Linux cannot create", maxNameLen)
	}
	return name, nil
}

// nameScan is what cleanName asks of a name's components, seen in one pass of IndexBytes:
// every member's name is checked twice, at the cache index's read and at Stage.
type nameScan struct {
	dotDot  bool // a component is ".."
	clean   bool // path.Clean returns the name, relative, as it is: no component empty, "." or ".."
	slashes int
	longest int // the longest component's length
}

func scanName(p string) nameScan {
	s := nameScan{clean: true}
	for {
		c, rest, more := strings.Cut(p, "/")
		switch c {
		case "..":
			s.dotDot, s.clean = true, false
		case "", ".":
			s.clean = false
		}
		s.longest = max(s.longest, len(c))
		if !more {
			return s
		}
		s.slashes++
		p = rest
	}
}

// checkText refuses empty text, text that is not UTF-8, control characters (NUL, C0, DEL,
// C1) and the bidirectional controls that make a name display as another.
func checkText(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return fmt.Errorf("control character %U", rune(s[i]))
		}
		ascii = ascii && s[i] < utf8.RuneSelf
	}
	if ascii {
		return nil
	}
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("control character %U", r)
		case unicode.Is(unicode.Bidi_Control, r):
			return fmt.Errorf("bidirectional control character %U", r)
		}
	}
	return nil
}

// checkWindows refuses the path forms Windows gives a meaning: a backslash separator
// ("..\x", "\\server\share") and a drive ("C:", "C:/x").
func checkWindows(p string) error {
	if strings.IndexByte(p, '\\') >= 0 {
		return errors.New("backslash, a path separator on Windows")
	}
	if len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z') {
		return errors.New("a Windows drive")
	}
	return nil
}

// escapes reports whether a cleaned relative path leaves its root.
func escapes(cleaned string) bool {
	return cleaned == ".." || strings.HasPrefix(cleaned, "../")
}

// memberType returns the type of an allowed member.
func memberType(flag byte) (byte, error) {
	switch flag {
	case tar.TypeReg, tar.TypeDir, tar.TypeSymlink, tar.TypeLink:
		return flag, nil
	case tar.TypeGNUSparse:
		return 0, ErrSparse
	}
	return 0, refusedf(ErrType, ": %s", kindName(flag))
}

// checkAttrs refuses special mode bits, sparse records and xattrs.
func checkAttrs(hdr *tar.Header) error {
	if hdr.Mode&specialBits != 0 {
		return refusedf(ErrSpecialBits, " (mode %#o)", hdr.Mode&0o7777)
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return ErrSparse
		}
	}
	for k := range hdr.PAXRecords {
		for _, prefix := range xattrRecords {
			if strings.HasPrefix(k, prefix) {
				return refusedf(ErrXattr, " (pax record %s)", k)
			}
		}
	}
	return nil
}

// xattrRecords are the pax record prefixes of extended attributes, ACLs (stored as
// xattrs), SELinux labels and BSD file flags, as GNU tar, star and libarchive write them.
var xattrRecords = []string{"SCHILY.xattr.", "LIBARCHIVE.xattr.", "SCHILY.acl.", "RHT.security.", "SCHILY.fflags"}

// checkSymlink returns the target of a symlink at name if it stays inside
// the package. Resolution is lexical; a ".." after a name in the target is
// refused because that name could be a symlink elsewhere in the package.
func checkSymlink(name, target string) (string, error) {
	if target == "" {
		return "", refusedf(ErrSymlinkEscape, ": empty target")
	}
	if err := checkText(target); err != nil {
		return "", refusedf(ErrName, ": %s in symlink target", err)
	}
	if len(target) > maxLinkLen {
		return "", limitError("symlink length", maxLinkLen, "symlink target of %d bytes, longer than the %d XFS can create", len(target), maxLinkLen)
	}
	if target[0] == '/' {
		return "", refusedf(ErrSymlinkEscape, ": absolute target %s", termtext.Quote(target))
	}
	if err := checkWindows(target); err != nil {
		return "", refusedf(ErrSymlinkEscape, ": target %s: %s", termtext.Quote(target), err)
	}
	if climbsAfterName(target) {
		return "", refusedf(ErrSymlinkEscape, ": \"..\" after a name in target %s", termtext.Quote(target))
	}
	if escapes(path.Join(path.Dir(name), target)) {
		return "", refusedf(ErrSymlinkEscape, ": target %s", termtext.Quote(target))
	}
	return target, nil
}

// climbsAfterName reports whether a ".." component follows a name in p.
func climbsAfterName(p string) bool {
	named := false
	for elem := range strings.SplitSeq(p, "/") {
		switch elem {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// checkHardlink returns the cleaned target of a hardlink if it is an earlier
// regular member and the link carries no data.
func (c *checker) checkHardlink(hdr *tar.Header) (string, error) {
	if hdr.Size != 0 {
		return "", refusedf(ErrHardlink, ": link carries %d bytes of data", hdr.Size)
	}
	target, err := cleanName(hdr.Linkname)
	if err != nil {
		return "", refusedf(ErrHardlink, ": target %s: %s", termtext.Quote(hdr.Linkname), Said(err))
	}
	if typ, _ := c.kind(target); typ != tar.TypeReg {
		return "", refusedf(ErrHardlink, ": target %s is not an earlier regular member", termtext.Quote(hdr.Linkname))
	}
	return target, nil
}

// kindName names a tar type flag in plain words.
func kindName(flag byte) string {
	switch flag {
	case tar.TypeReg:
		return "regular file"
	case tar.TypeDir:
		return "directory"
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hardlink"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeCont:
		return "contiguous file"
	}
	return fmt.Sprintf("type %q", flag)
}
