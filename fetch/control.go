package fetch

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"pkg/internal/termtext"
	"pkg/repo"
)

// maxControl bounds a .deb's control file (dpkg's are a few KiB).
const maxControl = 1 << 20 // 1 MiB

// Control is what a .deb's control file says of its package (deb-control(5)).
type Control struct {
	Package      string
	Version      string
	Architecture string
	Description  string // its first line, the synopsis
	// Relations holds the relation fields, by their names as deb-control(5) spells them
	// (relationFields), as written: Debian's names, alternatives and version operators,
	// continuation lines joined by a space.
	Relations map[string]string
}

// relationFields are the fields of a control file that name other packages, as
// deb-control(5) spells them; a control file's own spelling is matched ignoring case.
var relationFields = []string{"Depends", "Pre-Depends", "Provides", "Conflicts", "Breaks", "Replaces"}

// readControl reads the control file out of the control member name, a tar, read from r.
func readControl(name string, r io.Reader) (*Control, error) {
	zr, err := decompress(bufio.NewReader(r), r)
	if err != nil {
		return nil, memberError(name, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, &debError{member: name, reason: errDebNoControl}
		}
		if err != nil {
			return nil, memberError(name, err)
		}
		if strings.TrimPrefix(hdr.Name, "./") != "control" || hdr.Typeflag != tar.TypeReg {
			continue
		}
		if hdr.Size > maxControl {
			return nil, &debError{member: name, reason: fmt.Errorf("control file over %d bytes", maxControl)}
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, memberError(name, err)
		}
		return parseControl(data), nil
	}
}

// memberError is err, met reading the member name, as a *debError naming it: err itself
// where it is one already (the ar reader's, for a member cut short), so that the member is
// named once.
func memberError(name string, err error) error {
	if errors.As(err, new(*debError)) {
		return err
	}
	return &debError{member: name, reason: err}
}

// parseControl reads the fields of a control file's first paragraph; a line that starts
// with a space or a tab continues the field before.
func parseControl(data []byte) *Control {
	c := Control{Relations: map[string]string{}}
	field := "" // the relation field continuation lines add to
	for line := range bytes.Lines(data) {
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			break
		}
		if s[0] == ' ' || s[0] == '\t' {
			if field != "" {
				c.Relations[field] += " " + strings.TrimSpace(s)
			}
			continue
		}
		k, v, _ := strings.Cut(s, ":")
		v = strings.TrimSpace(v)
		field = ""
		switch strings.ToLower(k) {
		case "package":
			c.Package = v
		case "version":
			c.Version = v
		case "architecture":
			c.Architecture = v
		case "description":
			c.Description = v
		default:
			for _, f := range relationFields {
				if strings.EqualFold(k, f) {
					c.Relations[f], field = v, f
				}
			}
		}
	}
	return &c
}

// A ControlError is a field of a .deb's control file that pkg cannot represent: a name or
// version outside what pkg's index allows, or a relation it has no form for.
type ControlError struct {
	Package  string // the control file's Package
	Field    string // "Version", "Depends", ... as deb-control(5) spells it
	Relation string // the relation refused, as written; "" for Package and Version
	Err      error
}

func (e *ControlError) Error() string {
	if e.Relation == "" {
		return fmt.Sprintf("control file of %s: %s: %v", e.Package, e.Field, e.Err)
	}
	return fmt.Sprintf("control file of %s: %s: %q: %v", e.Package, e.Field, e.Relation, e.Err)
}

func (e *ControlError) Unwrap() error { return e.Err }

// Check refuses a Package or Version pkg's index cannot hold.
func (c *Control) Check() error {
	if !repo.ValidName(c.Package) || c.Package != strings.ToLower(c.Package) { // Debian's names are lower case (policy 5.6.1)
		return &ControlError{Package: c.Package, Field: "Package", Err: fmt.Errorf("%s is not a package name pkg can represent ([a-z0-9][a-z0-9._+-]*, at most 128 bytes)", termtext.Quote(c.Package))}
	}
	if err := repo.CheckVersion(c.Version); err != nil {
		return &ControlError{Package: c.Package, Field: "Version", Err: err}
	}
	return nil
}

// Requirements returns the relations of the named fields ("Depends", "Pre-Depends"), in
// that order, as pkg's requirements: a Debian relation "name[:arch] [(op version)]",
// alternatives joined by "|", is "name[op version]|...", where op "<<" is "<", ">>" is ">"
// and the obsolete "<" and ">" are "<=" and ">=", as dpkg reads them. An architecture
// qualifier of "any", "native" or the package's own architecture is dropped (a package of
// Architecture all takes any). Another names a package pkg cannot hold, of a second
// architecture: such an alternative is left out, and so is a Conflicts, Breaks or Replaces
// of one, which can never apply; a dependency with no other alternative is refused, as are
// architecture restrictions and build profiles (source packages' syntax), alternatives in
// any field but Depends and Pre-Depends, and an operator other than "=" in Provides.
func (c *Control) Requirements(fields ...string) ([]repo.Requirement, error) {
	var reqs []repo.Requirement
	for _, f := range fields {
		for rel := range strings.SplitSeq(c.Relations[f], ",") {
			rel = strings.TrimSpace(rel)
			if rel == "" { // an empty field; dpkg takes a trailing comma
				continue
			}
			r, ok, err := c.requirement(f, rel)
			if err != nil {
				return nil, &ControlError{Package: c.Package, Field: f, Relation: rel, Err: err}
			}
			if ok {
				reqs = append(reqs, r)
			}
		}
	}
	return reqs, nil
}

// requirement is one relation rel of field f as pkg's requirement; ok is false for one
// left out: a Conflicts, Breaks or Replaces of another architecture's package.
func (c *Control) requirement(f, rel string) (r repo.Requirement, ok bool, err error) {
	depends := f == "Depends" || f == "Pre-Depends"
	alts := strings.Split(rel, "|")
	if len(alts) > 1 && !depends {
		return r, false, fmt.Errorf("alternatives in %s", f)
	}
	var text []string
	var foreign error // the first alternative of another architecture
	for _, a := range alts {
		name, op, version, err := c.parseRelation(strings.TrimSpace(a))
		var fe *foreignError
		switch {
		case errors.As(err, &fe) && f != "Provides":
			foreign = cmp.Or(foreign, err)
			continue
		case err != nil:
			return r, false, err
		case name != strings.ToLower(name):
			return r, false, fmt.Errorf("%s is not a package name: Debian's are lower case", termtext.Quote(name))
		case f == "Provides" && op != "" && op != "=":
			return r, false, fmt.Errorf("operator %q in Provides, which takes only \"=\"", op)
		}
		text = append(text, name+op+version)
	}
	switch {
	case text == nil && depends:
		return r, false, foreign
	case text == nil:
		return r, false, nil
	}
	err = r.UnmarshalText([]byte(strings.Join(text, "|"))) // its error names the requirement, not the package
	return r, err == nil, err
}

// foreignError is a relation to a package of another architecture than the package's.
type foreignError struct{ arch, own string }

func (e *foreignError) Error() string {
	return fmt.Sprintf("architecture qualifier %q: pkg holds packages of one architecture, %s", ":"+e.arch, e.own)
}

// debOps maps Debian's relation operators to pkg's, two-byte ones first.
var debOps = []struct{ deb, pkg string }{{"<<", "<"}, {"<=", "<="}, {">>", ">"}, {">=", ">="}, {"=", "="}, {"<", "<="}, {">", ">="}}

// parseRelation splits one alternative, "name[:arch] [(op version)]", into its name, pkg's
// operator and the version, dropping an architecture qualifier that names this package's
// architecture; a *foreignError for another.
func (c *Control) parseRelation(a string) (name, op, version string, err error) {
	name, rest, _ := strings.Cut(a, "(")
	name = strings.TrimSpace(name)
	if i := strings.IndexAny(name, " \t[<"); i >= 0 {
		return "", "", "", fmt.Errorf("%q after the name: architecture restrictions and build profiles belong to source packages", name[i:])
	}
	name, arch, qualified := strings.Cut(name, ":")
	if name == "" {
		return "", "", "", fmt.Errorf("no package name")
	}
	if qualified && arch != "any" && arch != "native" && arch != c.Architecture && c.Architecture != "all" {
		return "", "", "", &foreignError{arch: arch, own: c.Architecture}
	}
	if rest == "" {
		return name, "", "", nil
	}
	inner, tail, closed := strings.Cut(rest, ")")
	if !closed || strings.TrimSpace(tail) != "" {
		return "", "", "", fmt.Errorf("version constraint not closed by \")\", or followed by more")
	}
	inner = strings.TrimSpace(inner)
	for _, o := range debOps {
		if v, ok := strings.CutPrefix(inner, o.deb); ok {
			if v = strings.TrimSpace(v); v == "" {
				return "", "", "", fmt.Errorf("no version after %q", o.deb)
			}
			return name, o.pkg, v, nil
		}
	}
	return "", "", "", fmt.Errorf("version constraint %q does not start with one of << <= = >= >>", inner)
}
