package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"pkg/db"
	"pkg/install"
	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/pin"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// verbs are what a change does to a package, in the order committedText counts them.
var verbs = []string{"installed", "upgraded", "downgraded", "replaced", "reinstalled", "removed"}

// resultVerb is what res did, one of verbs: again says the change was a reinstall.
func resultVerb(res *install.Result, again bool) string {
	switch n := repo.CompareVersions(res.Version, res.Previous); {
	case res.Again || again && res.Previous != "":
		return "reinstalled"
	case res.Previous == "":
		return "installed"
	case n > 0:
		return "upgraded"
	case n < 0:
		return "downgraded"
	}
	return "replaced"
}

// resultText says what a change did to one package, by what happened: installed,
// reinstalled (again: the whole change put the packages it had back as they were, those
// it installs beside them installed), upgraded,
// downgraded, or replaced by another archive of its version (locked: the lockfile's; else
// the local archive file origin, if not "", or the repository's), with its files, bytes
// and time.
func resultText(res *install.Result, again, locked bool, origin string) string {
	var what string
	switch v := resultVerb(res, again); {
	case v == "upgraded" || v == "downgraded":
		what = v + " " + res.Name + " " + res.Previous + " to " + res.Version
	case v != "replaced":
		what = v + " " + res.Name + " " + res.Version
	case locked: // the same version from another archive: the lockfile's, older or newer
		what = "replaced " + res.Name + " " + res.Version + " with the archive the lockfile names"
	case origin != "":
		what = "replaced " + res.Name + " " + res.Version + " with the archive " + termtext.Printable(origin)
	default:
		what = "replaced " + res.Name + " " + res.Version + " with the entry the repository now has of it"
	}
	return fmt.Sprintf("%s: %s, %s (%s cloned, %s copied) in %s", what,
		units.Count(res.Files, "file"), units.Size(res.Bytes), units.Size(res.Cloned), units.Size(res.Copied), units.Duration(res.Elapsed))
}

// HeldText says why an upgrade kept a package from its newest version: at the version it
// had, short of the newest, or below the version it had (its new hold takes it there).
func HeldText(h txn.Held) string {
	kind := h.Detail.Package.Kind
	if (repo.Package{Kind: kind, Version: h.Version}).CompareVersion(repo.Package{Kind: kind, Version: h.From}) < 0 {
		return fmt.Sprintf("%s goes down from %s to %s: %s", h.Name, h.From, h.Version, heldWhy(h))
	}
	if h.From != h.Version {
		return fmt.Sprintf("%s goes from %s to %s, not further: %s", h.Name, h.From, h.Version, heldWhy(h))
	}
	return fmt.Sprintf("kept %s at %s: %s", h.Name, h.Version, heldWhy(h))
}

// KeptText says why an autoremove keeps k (txn.Plan.Kept).
func KeptText(k txn.Change) string { return "keep " + k.Name + " " + k.Version + ": " + k.Why }

// BesideText says that n npm packages (txn.Held.Beside, repo.Outdated.Beside) stay at
// the versions their dependents' ranges allow, newer versions of their names installed
// beside them.
func BesideText(n int) string {
	if n == 1 {
		return "1 npm package stays at the version its dependents' ranges allow, a newer version of its name installed beside it for other packages"
	}
	return fmt.Sprintf("%d npm packages stay at the versions their dependents' ranges allow, newer versions of their names installed beside them for other packages", n)
}

// heldWhy says what keeps h: the local archive file it was installed from, the repository
// it was asked from, else what the resolver says.
func heldWhy(h txn.Held) string {
	switch {
	case h.Origin != "":
		return fmt.Sprintf("installed from the local archive file %s (newest %s)", termtext.Printable(h.Origin), h.Newest)
	case h.Gone != nil && h.Gone.InUse:
		return fmt.Sprintf("repository %s, which it was asked from, no longer offers it", h.HeldTo)
	case h.Gone != nil:
		return fmt.Sprintf("repository %s, which it was asked from, is not in use", h.HeldTo)
	case h.HeldTo != "":
		return fmt.Sprintf("held to repository %s, which it was asked from (newest %s)", h.HeldTo, h.Newest)
	}
	return h.Detail.Why()
}

// commandText says how the commands of a package kept across a change changed.
func commandText(ch txn.CommandChange) string {
	gone, added := strings.Join(ch.Gone, ", "), strings.Join(ch.Added, ", ")
	switch {
	case gone != "" && added != "":
		return fmt.Sprintf("%s %s has command %s in place of %s", ch.Name, ch.Version, added, gone)
	case gone != "":
		return fmt.Sprintf("%s %s no longer has command %s", ch.Name, ch.Version, gone)
	}
	return fmt.Sprintf("%s %s now has command %s", ch.Name, ch.Version, added)
}

// salvagedNames is how many paths SalvageText names in each list where it has more (one
// more is named whole: units.Some).
const salvagedNames = 5

// SalvageText says what a change kept of a tree it replaced or removed (install.Salvage):
// files the user added to the package's directory or changed in it, and the rest where
// pkg could not sort it out, in root; or, of the root's prefix, the user's files where the
// package's went or were, or what a package whose tree was gone left there (Gone), and the
// directories left holding what no package has.
func SalvageText(s install.Salvage, root string) []string {
	var lines []string
	pkg := instanceText(s.Kind, s.Key, s.Version)
	if s.Prefix {
		if len(s.Paths) > 0 && s.Gone {
			lines = append(lines, fmt.Sprintf("%s, whose tree is gone, left %s in the root that pkg cannot tell from yours: kept in %s: %s",
				pkg, units.Count(len(s.Paths), "path"), s.Dir, units.Some(s.Paths, salvagedNames)))
		} else if len(s.Paths) > 0 {
			lines = append(lines, fmt.Sprintf("the root held %s not pkg's where files of %s go or were: kept in %s: %s",
				units.Count(len(s.Paths), "path"), pkg, s.Dir, units.Some(s.Paths, salvagedNames)))
		}
		if len(s.Left) > 0 {
			dirs := "directories"
			if len(s.Left) == 1 {
				dirs = "directory"
			}
			lines = append(lines, fmt.Sprintf("%d %s of %s left in %s, holding what no package has: %s",
				len(s.Left), dirs, pkg, root, units.Some(s.Left, salvagedNames)))
		}
		return lines
	}
	if len(s.Paths) > 0 {
		lines = append(lines, fmt.Sprintf("the directory of %s held %s that it did not install or that changed since: kept in %s: %s",
			pkg, units.Count(len(s.Paths), "path"), s.Dir, units.Some(s.Paths, salvagedNames)))
	}
	rest := "the directory"
	if len(s.Paths) > 0 {
		rest = "the rest of the directory"
	}
	switch {
	case s.Err != nil:
		lines = append(lines, fmt.Sprintf("%s of %s held what pkg could not sort out, and could not be kept (%s): it stays under %s for the next pkg command to keep",
			rest, pkg, s.Err, filepath.Join(root, ".pkg")))
	case s.Tree != "":
		lines = append(lines, fmt.Sprintf("%s of %s held what pkg could not sort out (a part it could not read or move): kept whole in %s", rest, pkg, s.Tree))
	}
	return lines
}

// instanceText says which installed package key (repo.InstanceKey) of kind at version
// is: an npm instance's key, NAME@VERSION, holds its version; another's is its name.
func instanceText(kind, key, version string) string {
	if kind == repo.KindNPM {
		return key
	}
	return key + " " + version
}

// TrustText says, a line each, the keys of sources with where each comes from, and the
// repositories pins records the root pinned to their keys.
func TrustText(sources []trust.KeySource, pins []db.Pin) []string {
	var lines []string
	for _, s := range sources {
		for _, k := range s.Keys {
			pub := k
			pub.Repo = ""
			lines = append(lines, fmt.Sprintf("key %s %s: %s (%s)", k.ID(), k.Scope(), pub, s.Name))
		}
	}
	for _, p := range pins {
		keys := trust.PinnedTo(pin.KeyIDs(p))
		if keys == "" {
			keys = " to no key: refused until a key is trusted for it"
		}
		lines = append(lines, fmt.Sprintf("pinned %s: repository %s, version %d,%s", p.Location, p.Name, p.Version, keys))
	}
	return lines
}

// LockCount says how many packages l locks: "3 packages", or "3 packages for 2
// platforms" for a lock of some.
func LockCount(l *repo.Lock) string {
	if len(l.Platforms) == 0 {
		return units.Count(len(l.Packages), "package")
	}
	names := make(map[string]bool)
	for _, p := range l.Packages {
		names[p.Name] = true
	}
	return units.Count(len(names), "package") + " for " + units.Count(len(l.Platforms), "platform")
}
