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

// Remove uninstalls the named packages. It refuses, changing nothing, when one is not
// installed or another installed package depends on it.
func (r *Root) Remove(names ...string) error {
	for _, name := range names {
		if _, err := r.db.Get(name); err != nil {
			return fmt.Errorf("remove %s: not installed", name)
		}
	}
	if err := r.checkDependents(names); err != nil {
		return err
	}
	for _, name := range names {
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

// remove follows the commit protocol: intent, rename into the trash, record, delete.
func (r *Root) remove(name string) error {
	trash, err := os.MkdirTemp(r.path(".pkg", "trash"), name+".")
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(r.dir, trash)
	if err := r.db.SetIntent(db.Intent{Op: "remove", Name: name, Staging: rel}); err != nil {
		return err
	}
	// rename(2) replaces an empty directory, so the trash name is reserved above; os.Rename
	// refuses an existing directory as its target.
	if err := rename(r.pkgDir(name), trash); err != nil {
		return errors.Join(err, r.db.ClearIntent(name))
	}
	if err := r.syncDir(r.path("pkgs")); err != nil {
		return errors.Join(err, r.undo(db.Intent{Op: "remove", Name: name, Staging: rel}))
	}
	if err := r.db.Delete(name); err != nil {
		return errors.Join(err, r.undo(db.Intent{Op: "remove", Name: name, Staging: rel}))
	}
	if err := r.syncBins(); err != nil {
		return err
	}
	return removeTree(trash)
}
