package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"pkg/db"
	"pkg/repo"
)

// Remove uninstalls the named packages, each before those it depends on. It refuses,
// changing nothing, when one is not installed or another installed package depends on it.
func (r *Root) Remove(names ...string) error {
	for _, name := range names {
		if _, err := r.db.Get(name); err != nil {
			return fmt.Errorf("remove %s: not installed", name)
		}
	}
	if err := r.checkDependents(names); err != nil {
		return err
	}
	for _, name := range r.removalOrder(names) {
		if err := r.remove(name); err != nil {
			return fmt.Errorf("remove %s: %w", name, err)
		}
	}
	return nil
}

func (r *Root) checkDependents(names []string) error {
	all, err := r.db.List()
	if err != nil {
		return err
	}
	for _, p := range all {
		if slices.Contains(names, p.Name) {
			continue
		}
		for _, d := range p.Depends {
			req, err := repo.ParseRequirement(d)
			if err == nil && slices.Contains(names, req.Name) {
				return fmt.Errorf("remove %s: %s %s depends on it (remove %s too, or first)", req.Name, p.Name, p.Version, p.Name)
			}
		}
	}
	return nil
}

// removalOrder returns names with every package before those it depends on, so that a
// remove interrupted between two packages never leaves one without its dependency.
func (r *Root) removalOrder(names []string) []string {
	dependents := make(map[string][]string)
	for _, name := range names {
		p, err := r.db.Get(name)
		if err != nil {
			continue
		}
		for _, d := range p.Depends {
			if req, err := repo.ParseRequirement(d); err == nil && slices.Contains(names, req.Name) {
				dependents[req.Name] = append(dependents[req.Name], name)
			}
		}
	}
	var order []string
	seen := make(map[string]bool)
	var visit func(name string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		for _, d := range dependents[name] {
			visit(d)
		}
		order = append(order, name)
	}
	for _, name := range names {
		visit(name)
	}
	return order
}

// remove follows the commit protocol: intent, rename into the trash, record, delete.
func (r *Root) remove(name string) error {
	trash, err := os.MkdirTemp(r.path(".pkg", "trash"), name+".")
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(r.dir, trash)
	in := db.Intent{Op: "remove", Name: name, Staging: rel}
	if err := r.db.SetIntent(in); err != nil {
		os.Remove(trash)
		return err
	}
	// rename(2) replaces an empty directory, so the trash name is reserved above; os.Rename
	// refuses an existing directory as its target.
	if err := rename(r.pkgDir(name), trash); err != nil {
		os.Remove(trash)
		return errors.Join(err, r.db.ClearIntent(name))
	}
	if err := r.syncDir(r.path("pkgs")); err != nil {
		return errors.Join(err, r.rollback(in))
	}
	if err := r.db.Delete(name); err != nil {
		return errors.Join(err, r.rollback(in))
	}
	if err := r.syncBins(); err != nil {
		return err
	}
	// Removed once recorded, like a committed upgrade's old tree (Discard): whatever stays
	// in the trash goes at the next start.
	removeTree(trash)
	return nil
}
