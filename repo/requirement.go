package repo

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"pkg/internal/termtext"
)

// Requirement is a package name with version constraints, as in "jq>=1.6,<2".
// A version must satisfy every constraint.
//
// A requirement with Or has alternatives: "debconf>=0.5|debconf-2.0" is Name debconf,
// its constraints, and Or holding debconf-2.0. It is met by any one of its Alternatives,
// tried in order; none of them has Or or Repo.
type Requirement struct {
	Name        string
	Constraints []Constraint
	Repo        string        // the repository it pins the name to, as "team/jq" pins jq to team; "" for any
	Or          []Requirement // the alternatives after the first ("a>=1|b": b), each without Or or Repo
}

// Constraint bounds a version: Op is one of "=", "!=", "<", "<=", ">", ">=", and the
// version is compared with CompareVersions, or as dpkg does for a package of KindDeb; or Op is "@", which allows Version and the
// versions that extend it by "." or "+" and more, or by a revision ("-" or "_" and a
// digit), at the same epoch, a leading "v" aside: "@1.7" allows 1.7, 1.7.12, 1.7+1,
// 1.7-2 and v1.7.1, not 1.70, 1.7-rc1 or 1:1.7. An "@" constraint is written only alone,
// as "name@V".
//
// Or Op is "@npm:" and Version is an npm range, verbatim ("^4.3.1", ">=1.2.7 <1.3.0",
// "1.x || >=2.5.0"), which allows the versions npm's semver allows (npmAllows). It too is
// written only alone, as "name@npm:RANGE", in an npm package's relations and in requests.
type Constraint struct {
	Op      string
	Version string
}

// npmOp is the operator of an npm range (Constraint).
const npmOp = "@npm:"

// ops lists the operators, each before any of its prefixes.
var ops = []string{">=", "<=", "!=", "=", "<", ">"}

// ParseRequirement parses "name", or a name followed by comma-joined constraints
// ("jq=1.7", "jq>=1.6,<2"), or "name@V", for V and the versions that extend it
// (Constraint), each optionally after "REPO/" to pin the name to the repository REPO
// ("team/jq@1.7"): neither names nor versions hold a "/" before the constraints.
// Alternatives are joined by "|" ("debconf>=0.5|debconf-2.0") and name no repository.
// No spaces are allowed, but in the range of "name@npm:RANGE", which is the rest of s
// (Constraint). A name starting with "@" is a scoped one: "@eslint/js@9.1",
// "team/@eslint/js".
func ParseRequirement(s string) (Requirement, error) {
	r, err := parseRequirement(s)
	if err != nil {
		return Requirement{}, err
	}
	return r, nil
}

// ParseRequirements parses each of args as ParseRequirement does.
func ParseRequirements(args []string) ([]Requirement, error) {
	reqs := make([]Requirement, len(args))
	for i, a := range args {
		r, err := ParseRequirement(a)
		if err != nil {
			return nil, err
		}
		reqs[i] = r
	}
	return reqs, nil
}

// JoinRequirements returns reqs as they are written, separated by spaces.
func JoinRequirements(reqs []Requirement) string {
	s := make([]string, len(reqs))
	for i, r := range reqs {
		s[i] = r.String()
	}
	return strings.Join(s, " ")
}

func parseRequirement(s string) (Requirement, error) {
	if rng, ok := strings.CutPrefix(s[nameEnd(s):], npmOp); ok {
		return parseNPM(s, rng)
	}
	first, rest, ok := strings.Cut(s, "|")
	r, err := parseAlternative(s, first)
	if err != nil || !ok {
		return r, err
	}
	for alt := range strings.SplitSeq(rest, "|") {
		q, err := parseAlternative(s, alt)
		if err != nil {
			return Requirement{}, err
		}
		r.Or = append(r.Or, q)
	}
	for q := range r.Alternatives() {
		if q.Repo != "" {
			return Requirement{}, &requirementError{Text: s, Err: fmt.Errorf("alternative %q names a repository", q)}
		}
	}
	return r, nil
}

// parseAlternative parses s, one alternative of the requirement text whole.
func parseAlternative(whole, s string) (Requirement, error) {
	i := nameEnd(s)
	r, err := parseName(whole, s[:i])
	if err != nil {
		return Requirement{}, err
	}
	cs, err := parseConstraints(s[i:])
	if err != nil {
		return Requirement{}, &requirementError{Text: whole, Err: err}
	}
	r.Constraints = cs
	return r, nil
}

// nameEnd returns the length of the "[REPO/]NAME" that s, a requirement, starts with: up
// to the first of "=<>!@|", the "@" that starts a scoped name aside ("@eslint/js@9",
// "team/@eslint/js").
func nameEnd(s string) int {
	from := 0
	if strings.HasPrefix(s, "@") {
		from = 1
	} else if i := strings.Index(s, "/@"); i >= 0 && i == strings.IndexAny(s, "/=<>!@|") {
		from = i + 2
	}
	if i := strings.IndexAny(s[from:], "=<>!@|"); i >= 0 {
		return from + i
	}
	return len(s)
}

// parseName parses "[REPO/]NAME", the name of the requirement text whole.
func parseName(whole, s string) (Requirement, error) {
	r := Requirement{Name: s}
	if !strings.HasPrefix(s, "@") {
		if repo, name, ok := strings.Cut(s, "/"); ok {
			if !validRepoName(repo) {
				return Requirement{}, &requirementError{Text: whole, Err: fmt.Errorf("bad repository name %q (want [a-z0-9][a-z0-9._+-]*)", repo)}
			}
			r.Repo, r.Name = repo, name
		}
	}
	if !validName(r.Name) {
		return Requirement{}, &requirementError{Text: whole, Err: badName(r.Name)}
	}
	return r, nil
}

// parseNPM parses whole, "[REPO/]NAME@npm:RANGE", whose range is rng.
func parseNPM(whole, rng string) (Requirement, error) {
	r, err := parseName(whole, whole[:len(whole)-len(rng)-len(npmOp)])
	if err != nil {
		return Requirement{}, err
	}
	if _, err := parseRangeOnce(rng); err != nil {
		return Requirement{}, &requirementError{Text: whole, Err: err}
	}
	r.Constraints = []Constraint{{Op: npmOp, Version: rng}}
	return r, nil
}

// NPMRange returns the npm range of r, "name@npm:RANGE", and whether r is one.
func (r Requirement) NPMRange() (string, bool) {
	if len(r.Constraints) == 1 && r.Constraints[0].Op == npmOp {
		return r.Constraints[0].Version, true
	}
	return "", false
}

// requirementError is a requirement that does not parse.
type requirementError struct {
	Text string // the requirement as given
	Err  error
}

func (e *requirementError) Error() string {
	return fmt.Sprintf("requirement %s: %v", termtext.Quote(e.Text), e.Err)
}

func (e *requirementError) Unwrap() error { return e.Err }

func parseConstraints(s string) ([]Constraint, error) {
	if s == "" {
		return nil, nil
	}
	if v, ok := strings.CutPrefix(s, "@"); ok {
		c, err := newConstraint("@", v) // one version: a comma makes it invalid
		if err != nil {
			return nil, err
		}
		return []Constraint{c}, nil
	}
	var cs []Constraint
	for part := range strings.SplitSeq(s, ",") {
		c, err := parseConstraint(part)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func parseConstraint(s string) (Constraint, error) {
	for _, op := range ops {
		if v, ok := strings.CutPrefix(s, op); ok {
			return newConstraint(op, v)
		}
	}
	return Constraint{}, fmt.Errorf("constraint %q does not start with one of = != < <= > >=", s)
}

func newConstraint(op, v string) (Constraint, error) {
	if v == "" {
		return Constraint{}, fmt.Errorf("no version after %q", op)
	}
	if err := checkVersion(v); err != nil {
		return Constraint{}, err
	}
	return Constraint{Op: op, Version: v}, nil
}

// Alternatives yields r's alternatives in order: r itself without Or, then r.Or.
func (r Requirement) Alternatives() iter.Seq[Requirement] {
	return func(yield func(Requirement) bool) {
		first := r
		first.Or = nil
		if !yield(first) {
			return
		}
		for _, a := range r.Or {
			if !yield(a) {
				return
			}
		}
	}
}

// Met reports whether a package of kind, name at version, providing provides, meets r:
// one of r's alternatives names it and allows version (AllowsOf), or names one of its
// provides. An unversioned alternative is met by any provides of its name; a versioned one
// only by a "NAME=V" provides whose V it allows (as Debian has it). r.Repo is not looked at.
func (r Requirement) Met(kind, name, version string, provides []Requirement) bool {
	for a := range r.Alternatives() {
		if a.Name == name && a.AllowsOf(kind, version) || a.providedBy(kind, provides) {
			return true
		}
	}
	return false
}

// providedBy reports whether an entry of provides, of a package of kind, meets a, one
// alternative, as Met has it.
func (a Requirement) providedBy(kind string, provides []Requirement) bool {
	for _, p := range provides {
		if p.Name == a.Name && (len(a.Constraints) == 0 || providedVersion(p) != "" && a.AllowsOf(kind, providedVersion(p))) {
			return true
		}
	}
	return false
}

// providedVersion is V of a "NAME=V" provides entry, "" for a bare one.
func providedVersion(p Requirement) string {
	if len(p.Constraints) == 1 && p.Constraints[0].Op == "=" {
		return p.Constraints[0].Version
	}
	return ""
}

// Allows reports whether version satisfies every constraint of r (of its first
// alternative: see Met for the others), compared with CompareVersions.
func (r Requirement) Allows(version string) bool { return r.AllowsOf("", version) }

// AllowsOf is Allows of a version of a package of kind: one of KindDeb is compared as
// dpkg compares it, so that "=1.0" allows 1.0-0 and "<1:2.39.5-." allows 1:2.39.5-0+deb12u3.
func (r Requirement) AllowsOf(kind, version string) bool {
	for _, c := range r.Constraints {
		if !c.allows(kind, version) {
			return false
		}
	}
	return true
}

func (c Constraint) allows(kind, v string) bool {
	order := versionOrder(kind)
	switch c.Op {
	case "@":
		return order(v, c.Version) == 0 || extends(v, c.Version)
	case npmOp:
		return npmAllows(c.Version, v)
	}
	return holds(c.Op, order(v, c.Version))
}

// holds reports whether op ("=", "!=", "<", "<=", ">" or ">=") holds of n, a comparison's
// result; another op holds of nothing.
func holds(op string, n int) bool {
	switch op {
	case "=":
		return n == 0
	case "!=":
		return n != 0
	case "<":
		return n < 0
	case "<=":
		return n <= 0
	case ">":
		return n > 0
	case ">=":
		return n >= 0
	}
	return false
}

// extends reports whether v is prefix and more, in the sense of an "@" constraint.
func extends(v, prefix string) bool {
	vEpoch, vUp := splitEpoch(v)
	pEpoch, pUp := splitEpoch(prefix)
	if compareNumbers(vEpoch, pEpoch) != 0 {
		return false
	}
	rest, ok := strings.CutPrefix(trimV(vUp), trimV(pUp))
	switch {
	case !ok:
		return false
	case rest == "":
		return true // v1.7 for 1.7
	case rest[0] == '.' || rest[0] == '+':
		return true
	}
	return (rest[0] == '-' || rest[0] == '_') && len(rest) > 1 && isDigit(rest[1])
}

// trimV removes the "v" of a version (without epoch) spelled as a git tag.
func trimV(up string) string {
	if len(up) > 1 && up[0] == 'v' && isDigit(up[1]) {
		return up[1:]
	}
	return up
}

// welcomes returns the releases whose pre-releases r asks for: those of the pre-releases
// its constraints bound or pin ("jq>=2.0-rc1" takes 2.0-rc2 over 1.9, not 3.0-beta); an
// exclusion ("!=2.0-rc1") asks for none.
func (r Requirement) welcomes() []string {
	var rels []string
	for _, c := range r.Constraints {
		if c.Op != "!=" && c.Op != npmOp { // an npm range says which pre-releases it allows
			rels = append(rels, releaseOf(Package{Version: c.Version})...)
		}
	}
	return rels
}

// With returns r with the constraints of o added and o's repository pin, where it has
// one: two requirements on one package, both to keep (a pin outlives the command, and
// upgrade keeps to it).
func (r Requirement) With(o Requirement) Requirement {
	r.Constraints = append(slices.Clip(r.Constraints), o.Constraints...)
	if o.Repo != "" {
		r.Repo = o.Repo
	}
	return r
}

// Equal reports whether r and s are the same requirement, spelled the same.
func (r Requirement) Equal(s Requirement) bool {
	return r.Name == s.Name && r.Repo == s.Repo && slices.Equal(r.Constraints, s.Constraints) &&
		slices.EqualFunc(r.Or, s.Or, Requirement.Equal)
}

// MarshalText returns r.String(): a requirement is written as it is read.
func (r Requirement) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses text as ParseRequirement does.
func (r *Requirement) UnmarshalText(text []byte) error {
	q, err := parseRequirement(string(text))
	if err != nil {
		return err
	}
	*r = q
	return nil
}

// String returns r in the form ParseRequirement reads, as in "jq>=1.6,<2", "jq@1.7" or
// "debconf>=0.5|debconf-2.0".
func (r Requirement) String() string {
	var b strings.Builder
	if r.Repo != "" {
		b.WriteString(r.Repo + "/")
	}
	b.WriteString(r.Name)
	for i, c := range r.Constraints {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.Op)
		b.WriteString(c.Version)
	}
	for _, q := range r.Or {
		b.WriteString("|" + q.String())
	}
	return b.String()
}
