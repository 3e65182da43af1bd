package repo

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pkg/internal/units"
)

// Upgrade resolves the upgrade of installed packages: the named ones and the installed
// packages they depend on, transitively, move to the newest versions ix offers (releases
// before pre-releases, as in Resolve), never older than installed, that the depends of
// every installed package allow; the others stay as they are. With no names every
// installed package may move. A newer version's new
// dependencies are added. An installed version missing from ix is kept as installed.
//
// A package that may move stays within its hold, if holds has one.
//
// installed lists one record per installed name, but for npm instances, of which a name
// may have several. An npm instance that may move (of a name in names, or one an instance
// that may move leads to: Edges) is resolved again as its dependents' ranges, or its hold,
// take it (the npm resolver), the others stay as they are; a held one stays within its
// hold, a range that leads to it and wants newer taking another instance; an instance
// that may move and that nothing leads to any more is not in the result. The result holds every package of
// the upgraded set, changed or not, in dependency order.
func (ix *Index) Upgrade(installed []Package, names []string, holds ...Hold) ([]Package, error) {
	npm, installed := splitInstances(installed)
	byName := make(map[string]Package, len(installed))
	for _, p := range installed {
		byName[p.Name] = p
	}
	for _, n := range names {
		if _, ok := byName[n]; !ok && !slices.ContainsFunc(npm, func(p Package) bool { return p.Name == n }) {
			return nil, &notInstalledError{n}
		}
	}
	reqs, free := upgradeReqs(byName, installed, names, holds) // ">=V" of a pre-release welcomes its release's
	r := newResolver(withInstalled(ix, kept(ix, byName, free)))
	pinned, roots, held := npmUpgrade(npm, names, holds, r.versions)
	r.npm.prefer(pinned)
	r.npm.held = held
	for _, q := range roots { // each to its newest release or within its hold, whatever another took
		r.npm.renew = append(r.npm.renew, q.Name)
	}
	return r.resolve(append(reqs, roots...))
}

// A Hold keeps the installed package Key (Package.Key) within a requirement on its name
// with a version constraint that the user asked for it by, as apt-mark hold or brew pin
// do. An npm instance's hold is its own: the name's other instances are not held by it.
type Hold struct {
	Key string
	Requirement
}

// holdOf returns the hold of the installed package p among holds, without the repository
// it may name.
func holdOf(holds []Hold, p Package) (Requirement, bool) {
	i := slices.IndexFunc(holds, func(h Hold) bool { return h.Key == p.Key() && len(h.Constraints) > 0 })
	if i < 0 {
		return Requirement{}, false
	}
	return Requirement{Name: p.Name, Constraints: holds[i].Constraints}, true
}

// kept returns the installed packages an upgrade keeps exactly as installed, in place of
// the index's entries: all but those that may move and whose version the publisher
// republished with another archive or entry (repo add --replace), or that a repair recorded
// Bare (installing no entry) and the index offers, which take the index's.
func kept(ix *Index, byName map[string]Package, free map[string]bool) map[string]Package {
	versions := ix.versions()
	keep := make(map[string]Package, len(byName))
	for name, p := range byName {
		if !free[name] || !rerecorded(versions[name], p) && !republished(versions[name], p) {
			keep[name] = p
		}
	}
	return keep
}

// republished reports whether vs, the versions an index has of p's name (versions), hold
// p's version from another archive than p's, or with another entry of it (SameEntry: its
// env, say): the publisher replaced it (repo add --replace).
func republished(vs []Package, p Package) bool {
	return slices.ContainsFunc(vs, func(q Package) bool {
		return q.Version == p.Version && (q.SHA256 != p.SHA256 || !q.SameEntry(p))
	})
}

// rerecorded tells whether p was recorded Bare and vs, an index's versions of its name,
// offer its version, whose entry an upgrade records in its place.
func rerecorded(vs []Package, p Package) bool {
	return p.Bare && slices.ContainsFunc(vs, func(q Package) bool { return q.Version == p.Version })
}

// sameArchive tells whether q is p's version from p's archive.
func (p Package) sameArchive(q Package) bool {
	return q.Version == p.Version && q.SHA256 == p.SHA256
}

// upgradeReqs returns what Upgrade resolves: each installed package at its version, or at
// least at it and within its hold when it may move; and which may move.
func upgradeReqs(byName map[string]Package, installed []Package, names []string, holds []Hold) ([]Requirement, map[string]bool) {
	free := movable(byName, names)
	reqs := make([]Requirement, 0, len(installed))
	for _, p := range installed {
		op := "="
		if free[p.Name] {
			op = ">="
		}
		reqs = append(reqs, Requirement{Name: p.Name, Constraints: []Constraint{{Op: op, Version: p.Version}}})
		if h, ok := holdOf(holds, p); ok && free[p.Name] {
			reqs = append(reqs, h)
		}
	}
	return reqs, free
}

// Held is a package an upgrade keeps below the newest version it could move to, and why;
// or one it keeps because the index offers no version of it as new as the installed one.
type Held struct {
	Package   Package // as the upgrade leaves it
	Installed string  // the version installed
	Newest    string  // the version not older than installed an upgrade would take on its own (preferred); "" if none
	Older     string  // when Newest is "", the newest version the index has, if any
	Reason    error   // what resolving the upgrade with Newest runs into; nil when Newest is "" or Hold keeps it
	// Hold is the package's own hold, when that is what keeps it below Newest; nil otherwise.
	Hold *Requirement
	// The version just below Newest, newer than the package's, which the upgrade could not
	// take either, and why (another package's constraint, say); "" and nil if none.
	Next       string
	NextReason error
	// LedBy are, of an npm instance the upgrade keeps where it is, the ranges of the
	// instances leading to it that Newest does not meet, each by the package that has it.
	LedBy []Dependent
	holds []Hold // the holds of the upgrade, which Why calls so
}

// A Dependent is a dependency of the package By ("name version") on another.
type Dependent struct {
	Requirement
	By string
}

// HeldBack returns the packages of plan, the result of Upgrade(installed, names), that
// may move but stay below the version the upgrade would take on its own (Newest), each
// with what stops it: the error of the same upgrade with that package at Newest. A
// package that could reach Newest on its own, but not together with the others, is not
// listed. It also returns, with Newest "", the packages that may move but that the index
// offers only in older versions, or not at all. A package its own hold keeps below Newest
// comes with that Hold (holds as Upgrade takes them): so does an npm instance the upgrade
// resolves again from its hold (nothing leads to it) that keeps it below the newest
// release.
func (ix *Index) HeldBack(installed []Package, names []string, plan []Package, holds ...Hold) []Held {
	npm, installed := splitInstances(installed)
	byName := make(map[string]Package, len(installed))
	for _, p := range installed {
		byName[p.Name] = p
	}
	reqs, free := upgradeReqs(byName, installed, names, holds)
	versions, with := ix.versions(), withInstalled(ix, kept(ix, byName, free)).versions()
	planned := make(map[string]string, len(plan))
	for _, p := range plan {
		planned[p.Name] = p.Version
	}
	var held []Held
	for _, p := range plan {
		cur, ok := byName[p.Name]
		if !ok || !free[p.Name] {
			continue
		}
		atLeast := Requirement{Name: p.Name, Constraints: []Constraint{{Op: ">=", Version: cur.Version}}}
		all := versions[p.Name]
		vs := preferred(all, releaseOf(cur))
		i := slices.IndexFunc(vs, func(v Package) bool { return atLeast.AllowsOf(v.Kind, v.Version) })
		if i < 0 {
			h := Held{Package: p, Installed: cur.Version}
			if len(all) > 0 {
				h.Older = all[0].Version
			}
			held = append(held, h)
			continue
		}
		if vs[i].Version == p.Version {
			continue
		}
		if hold, ok := holdOf(holds, cur); ok && !hold.AllowsOf(vs[i].Kind, vs[i].Version) {
			held = append(held, Held{Package: p, Installed: cur.Version, Newest: vs[i].Version, Hold: &hold})
			continue
		}
		pinned := func(v string) error {
			rs := slices.Clone(reqs)
			for j := range rs {
				if rs[j].Name == p.Name {
					rs[j].Constraints = []Constraint{{Op: "=", Version: v}}
				}
			}
			_, err := resolveIn(with, rs)
			if err == nil {
				return nil
			}
			// Why v cannot join the others as the upgrade leaves them: the first dead end of
			// the search with the others free may be another package's newest version, which
			// the upgrade does not take either.
			for j := range rs {
				if w, ok := planned[rs[j].Name]; ok && rs[j].Name != p.Name {
					rs[j].Constraints = []Constraint{{Op: "=", Version: w}}
				}
			}
			if _, ex := resolveIn(with, rs); ex != nil && !errors.Is(ex, ErrGaveUp) {
				return ex
			}
			return err
		}
		h := Held{Package: p, Installed: cur.Version, Newest: vs[i].Version, Reason: pinned(vs[i].Version), holds: holds}
		if h.Reason == nil {
			continue
		}
		if i+1 < len(vs) && vs[i+1].Version != p.Version && atLeast.AllowsOf(vs[i+1].Kind, vs[i+1].Version) {
			if err := pinned(vs[i+1].Version); err != nil {
				h.Next, h.NextReason = vs[i+1].Version, err
			}
		}
		held = append(held, h)
	}
	held = append(held, heldNPM(npm, names, plan, holds, versions)...)
	return append(held, ledNPM(npm, names, plan, holds, versions)...)
}

// ledNPM is HeldBack of the installed npm instances npm that the upgrade of names may move
// (npmRoots) but keeps where they are, below the newest release, as the ranges of the
// instances leading to them in plan allow no newer one: a dependent's exact version
// (debug 4.3.4's ms@npm:2.1.2), say. An instance its own hold keeps is heldNPM's.
func ledNPM(npm []Package, names []string, plan []Package, holds []Hold, versions map[string][]Package) []Held {
	pinned, _ := npmRoots(npm, names, holds, versions)
	var set []Package
	for _, q := range plan {
		if q.npm() {
			set = append(set, q)
		}
	}
	edges := Edges(set)
	var held []Held
	for _, p := range npm {
		_, isHeld := holdOf(holds, p)
		newest, found := newestMeeting(versions[p.Name], Requirement{Name: p.Name})
		if isHeld || !found || compareKind(newest, p) <= 0 || !slices.ContainsFunc(set, func(q Package) bool { return q.Key() == p.Key() }) ||
			slices.ContainsFunc(pinned, func(q Package) bool { return q.Key() == p.Key() }) {
			continue
		}
		var by []Dependent
		for _, d := range set {
			for _, r := range append(npmDepends(d), d.Optional...) {
				if q, ok := edges[d.Key()][r.Name]; ok && r.Name == p.Name && q.Key() == p.Key() && !r.AllowsOf(newest.Kind, newest.Version) {
					by = append(by, Dependent{Requirement: r, By: d.Name + " " + d.Version})
				}
			}
		}
		if len(by) > 0 {
			held = append(held, Held{Package: p, Installed: p.Version, Newest: newest.Version, LedBy: by})
		}
	}
	return held
}

// heldNPM is HeldBack of the installed npm instances npm: each that the upgrade of names
// resolves again from its hold (npmRoots) where the hold keeps it below the newest release.
func heldNPM(npm []Package, names []string, plan []Package, holds []Hold, versions map[string][]Package) []Held {
	var held []Held
	_, roots := npmRoots(npm, names, holds, versions)
	for _, p := range roots {
		hold, ok := holdOf(holds, p)
		newest, found := newestMeeting(versions[p.Name], Requirement{Name: p.Name})
		if !ok || !found || compareKind(newest, p) <= 0 || hold.Allows(newest.Version) {
			continue
		}
		var took []Package // the instances of the name the upgrade leaves, newest first
		for _, q := range plan {
			if q.npm() && q.Name == p.Name {
				took = append(took, q)
			}
		}
		slices.SortFunc(took, func(a, b Package) int { return compareKind(b, a) })
		left, ok := newestMeeting(took, hold)
		if !ok {
			left = p
		}
		held = append(held, Held{Package: left, Installed: p.Version, Newest: newest.Version, Hold: &hold})
	}
	return held
}

// movable returns the names Upgrade may move: names and what they depend on among the
// installed packages (Dependencies), or every installed name when names is empty.
func movable(installed map[string]Package, names []string) map[string]bool {
	free := make(map[string]bool)
	if len(names) == 0 {
		for n := range installed {
			free[n] = true
		}
		return free
	}
	deps := Dependencies(slices.Collect(maps.Values(installed)))
	todo := slices.Clone(names)
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, ok := installed[n]; !ok || free[n] {
			continue
		}
		free[n] = true
		todo = append(todo, deps[n]...)
	}
	return free
}

// withInstalled returns ix with each installed package, by Key, in place of the index's
// entry of the same name and version, so that keeping an installed version keeps it exactly.
func withInstalled(ix *Index, installed map[string]Package) *Index {
	out := &Index{Format: ix.Format, Platform: ix.Platform}
	for _, p := range ix.Packages {
		if q, ok := installed[p.Key()]; !ok || q.Version != p.Version {
			out.Packages = append(out.Packages, p)
		}
	}
	for _, p := range installed {
		out.Packages = append(out.Packages, p)
	}
	return out
}

// Why says why an upgrade keeps h where it is.
func (h Held) Why() string {
	switch {
	case h.Hold != nil:
		return fmt.Sprintf("held by its request %s (newest %s)", h.Hold, h.Newest)
	case len(h.LedBy) > 0:
		var by []string
		for _, d := range h.LedBy {
			by = append(by, d.By+" depends on "+d.Requirement.String())
		}
		return fmt.Sprintf("%s (newest %s)", strings.Join(by, ", "), h.Newest)
	case h.Newest != "":
		why := fmt.Sprintf("%s %s cannot be installed: %s", h.Package.Name, h.Newest, h.conflictWhy(h.Newest, "the newest", h.Reason))
		if h.Next != "" {
			why += fmt.Sprintf("; nor %s: %s", h.Next, h.conflictWhy(h.Next, "tried", h.NextReason))
		}
		return why
	case h.Older != "":
		return fmt.Sprintf("the repository offers only older versions (newest %s)", h.Older)
	}
	return "the repository no longer offers it"
}

// conflictWhy words err, the resolver's refusal of h's package at version, for Why: a
// conflict without the versions the index has (the upgrade says them), and upgrade's own
// requirements by what they are: the version tried is called what, a hold "held", and each
// installed package "installed" (or "installed, or newer" where it may move).
func (h Held) conflictWhy(version, what string, err error) string {
	name := h.Package.Name
	var ce *conflictError
	if !errors.As(err, &ce) {
		return err.Error()
	}
	var parts []string
	for _, n := range ce.Needs {
		switch {
		case n.By != "":
			parts = append(parts, n.String())
		case slices.ContainsFunc(h.holds, func(r Hold) bool {
			return r.Name == n.Name && slices.Equal(r.Constraints, n.Constraints)
		}):
			parts = append(parts, n.Requirement.String()+" (held)")
		case n.Name == name && slices.Equal(n.Constraints, []Constraint{{Op: "=", Version: version}}):
			parts = append(parts, n.Requirement.String()+" ("+what+")")
		case slices.ContainsFunc(n.Constraints, func(c Constraint) bool { return c.Op == ">=" }):
			parts = append(parts, n.Requirement.String()+" (installed, or newer)")
		default:
			parts = append(parts, n.Requirement.String()+" (installed)")
		}
	}
	return fmt.Sprintf("no version of %q satisfies %s", ce.Name, units.List(parts, ce.More))
}

// BelowError refuses an upgrade naming an npm package with a constraint that allows none
// of its installed versions, none of which is held, and of the versions offered only some
// below the newest installed: it would move one below its installed version, which an
// upgrade never does.
type BelowError struct {
	Requirement Requirement
	Installed   []string // the versions of its name installed
}

func (e *BelowError) Error() string {
	return fmt.Sprintf("upgrade %s: %s allows none of the versions installed (%s), and an upgrade moves no package below its installed version",
		e.Requirement.Name, e.Requirement, strings.Join(e.Installed, ", "))
}

// notInstalledError is ErrNotInstalled for name, given to Upgrade.
type notInstalledError struct{ name string }

func (e *notInstalledError) Error() string        { return "upgrade " + e.name + ": not installed" }
func (e *notInstalledError) Is(target error) bool { return target == ErrNotInstalled }
