package install

import (
	"errors"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/termtext"
	"pkg/repo"
)

// A Gone is a package a database records whose tree pkgs/ no longer holds (deleted by
// hand, say), and the recorded packages that need it.
type Gone struct {
	Package, Version, Kind string
	Tree                   string   // the path of its tree, pkgs/KEY
	By                     []string // "NAME VERSION" of each recorded package that depends on it, nothing else meeting that
	// Requested is the requirement the user asked for it by, where the database records
	// that they did (Rebuilt.Gone: a repair that drops it drops the request too).
	Requested *repo.Requirement
}

// Key is the instance key the database records g's package by.
func (g Gone) Key() string { return repo.InstanceKey(g.Kind, g.Package, g.Version) }

// A GoneError refuses the repair of a database that is not damaged whose records name
// packages whose trees are gone: Rebuild changed nothing, as a prefix made to agree with
// those records could not be linked from trees that are not there. The records are
// right; installing those packages again puts their trees back.
type GoneError struct {
	Gone []Gone
}

func (e *GoneError) Error() string {
	s := make([]string, len(e.Gone))
	for i, g := range e.Gone {
		s[i] = termtext.Safe(g.Package+" "+g.Version) + " is recorded, but its tree " + termtext.Safe(g.Tree) + " is gone"
		switch len(g.By) {
		case 0:
		case 1:
			s[i] += " (" + termtext.Safe(g.By[0]) + " depends on it)"
		default:
			s[i] += " (" + termtext.Safe(strings.Join(g.By, ", ")) + " depend on it)"
		}
	}
	return "repair: " + strings.Join(s, "; ") + ": nothing was changed"
}

// gone returns the packages of recs whose trees pkgs/ does not hold, each with the
// packages of by, less those, whose requirements it met and nothing else of by meets.
func (r *Root) gone(recs []db.Record, by []*db.Record) []Gone {
	var missing []*db.Record
	for i := range recs {
		fd, err := r.open(treeOf(recs[i].Key()), unix.O_PATH|unix.O_DIRECTORY)
		if err == nil {
			unix.Close(fd)
		} else if errors.Is(err, unix.ENOENT) { // else there, if not as a tree: verify says what it is
			missing = append(missing, &recs[i])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	kept := make(map[string]*db.Record, len(by))
	for _, b := range by {
		kept[b.Key()] = b
	}
	for _, p := range missing {
		delete(kept, p.Key())
	}
	meets := newMeets(kept)
	out := make([]Gone, len(missing))
	for i, p := range missing {
		only := newMeets(map[string]*db.Record{p.Key(): p})
		out[i] = Gone{Package: p.Name, Version: p.Version, Kind: p.Kind, Tree: r.pathOf(treeOf(p.Key()))}
		for _, b := range by {
			if kept[b.Key()] != nil && slices.ContainsFunc(required(b), func(req repo.Requirement) bool { return only.met(req) && !meets.met(req) }) {
				out[i].By = append(out[i].By, b.Name+" "+b.Version)
			}
		}
	}
	return out
}
