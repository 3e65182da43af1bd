package tarutil

import (
	"archive/tar"
	"time"

	"pkg/internal/termtext"
)

// Validate applies the member policy to a list of members, in order, as an installer is
// about to create them: each must be in the form Align, Scan and ReadIndex give (a cleaned
// name, permission bits only, data only on a regular member, a hardlink's target cleaned),
// pass every rule those apply, and have each of its parent directories listed before it.
// It returns the first refusal, a *MemberError.
func Validate(members []Member) error {
	c := newChecker()
	c.paths.reserve(len(members))
	var hdr tar.Header
	for i := range members {
		if err := c.checkMember(&members[i], &hdr); err != nil {
			return err
		}
	}
	return nil
}

// checkMember applies the policy to m, through hdr, its header.
func (c *checker) checkMember(m *Member, hdr *tar.Header) error {
	*hdr = tar.Header{Typeflag: m.Type, Name: m.Name, Linkname: m.Linkname, Mode: int64(m.Mode & 0o777), Size: m.Size, ModTime: time.Unix(m.MTime, 0)}
	if m.Type == tar.TypeDir {
		hdr.Name += "/"
	}
	if m.Mode&^0o777 != 0 {
		return &MemberError{Name: m.Name, Err: refusedf(ErrSpecialBits, " (mode %v)", m.Mode)}
	}
	checked, ok, err := c.check(hdr)
	var why error
	switch {
	case err != nil:
		if me, ok := err.(*MemberError); ok {
			me.Name = m.Name
		}
		return err
	case !ok || checked.Name != m.Name:
		why = refusedf(ErrName, ": not in canonical form")
	case checked.Linkname != m.Linkname:
		why = refusedf(ErrHardlink, ": target %s not in canonical form", termtext.Quote(m.Linkname))
	case checked.Size != m.Size:
		why = refusedf(ErrType, ": %s with %d bytes of data", kindName(m.Type), m.Size)
	case len(c.parents) > 0:
		why = refusedf(ErrParent, ": %s is not listed before it", termtext.Quote(c.parents[0]))
	}
	if why != nil {
		return &MemberError{Name: m.Name, Err: why}
	}
	return nil
}
