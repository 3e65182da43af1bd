package install

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pkg/db"
	"pkg/repo"
)

// CommitAll commits staged trees together, so that the root holds either all of them or
// none. It is Apply without removals.
func (r *Root) CommitAll(staged ...*Staged) ([]*Result, error) { return r.Apply(staged, nil) }

// Apply commits staged trees and removes the named packages together, so that the root
// holds either the whole change or none of it: after one sync, one transaction records an
// intent for each, every tree is swapped in and every removed tree renamed to the trash,
// one fsync of pkgs/ makes that durable, and one transaction records every package, deletes
// the removed ones and clears the intents. On an error it puts every old tree back; after
// a crash the next start does (see reconcile). It costs two transactions and one directory
// fsync in all, where Commit and Remove pay them for each package.
func (r *Root) Apply(staged []*Staged, remove []string) ([]*Result, error) {
	defer r.Discard(staged...)
	if len(staged) == 0 && len(remove) == 0 {
		return nil, nil
	}
	if err := r.checkApply(staged, remove); err != nil {
		return nil, err
	}
	if len(staged) > 0 {
		if err := r.syncfs(staged[0].dir); err != nil {
			return nil, installError(staged, err)
		}
	}
	ins, err := r.intents(staged)
	if err != nil {
		return nil, err
	}
	rins, err := r.removeIntents(remove)
	if err != nil {
		return nil, err
	}
	defer r.dropTrash(rins)
	all := append(ins, rins...)
	if err := r.db.SetIntents(all); err != nil {
		return nil, installError(staged, err)
	}
	for i, s := range staged {
		if err := r.swapIn(s.dir, r.pkgDir(s.rec.Name)); err != nil {
			return nil, fmt.Errorf("install %s %s: %w", s.rec.Name, s.rec.Version, errors.Join(err, r.undoAll(staged, all, i)))
		}
	}
	for j, in := range rins {
		if err := rename(r.pkgDir(in.Name), r.path(in.Staging)); err != nil {
			return nil, fmt.Errorf("remove %s: %w", in.Name, errors.Join(err, r.undoAll(staged, all, len(ins)+j)))
		}
	}
	// From here a failed fsync or write is not retried (see rollback): the trees go back and
	// the intents stay for the next start to complete.
	if err := r.syncDir(r.path("pkgs")); err != nil {
		return nil, installError(staged, errors.Join(err, r.rollbackAll(staged, all)))
	}
	now := time.Now().UTC()
	recs, files := make([]*db.Package, len(staged)), make([][]db.File, len(staged))
	for i, s := range staged {
		s.rec.Installed = now
		recs[i], files[i] = s.rec, s.files
	}
	if err := r.db.CommitAll(recs, files, remove); err != nil {
		if r.recorded(all) {
			keep(staged)
			return nil, installError(staged, err)
		}
		return nil, installError(staged, errors.Join(err, r.rollbackAll(staged, all)))
	}
	results := make([]*Result, len(staged))
	for i, s := range staged {
		s.res.Elapsed = time.Since(s.start)
		results[i] = s.res
	}
	return results, r.syncBins()
}

// checkApply refuses a change that would leave two packages providing one command, or a
// package depending on one removed; and the removal of a package not installed.
func (r *Root) checkApply(staged []*Staged, remove []string) error {
	all, err := r.db.List()
	if err != nil {
		return err
	}
	final := make(map[string]*db.Package) // name → what the root would hold
	for i := range all {
		final[all[i].Name] = &all[i]
	}
	for _, name := range remove {
		if final[name] == nil {
			return fmt.Errorf("remove %s: not installed", name)
		}
		delete(final, name)
	}
	for _, s := range staged {
		final[s.rec.Name] = s.rec
	}
	provider := make(map[string]string) // command → the package providing it
	for _, s := range staged {          // the new ones first, so that errors name them
		for _, b := range s.rec.Bin {
			cmd := path.Base(b)
			if other, ok := provider[cmd]; ok && other != s.rec.Name {
				return fmt.Errorf("install %s %s: command %q is also provided by %s, installed with it",
					s.rec.Name, s.rec.Version, cmd, other)
			}
			provider[cmd] = s.rec.Name
		}
	}
	for _, s := range staged {
		for _, b := range s.rec.Bin {
			cmd := path.Base(b)
			for name, p := range final {
				if name != s.rec.Name && containsBin(p.Bin, cmd) {
					return fmt.Errorf("install %s %s: command %q is already provided by package %s",
						s.rec.Name, s.rec.Version, cmd, name)
				}
			}
		}
	}
	for name, p := range final {
		for _, d := range p.Depends {
			if req, err := repo.ParseRequirement(d); err == nil && slices.Contains(remove, req.Name) {
				return fmt.Errorf("remove %s: %s %s depends on it", req.Name, name, p.Version)
			}
		}
	}
	return nil
}

// removeIntents reserves a trash directory for each package to remove and returns the
// intents of their removal.
func (r *Root) removeIntents(remove []string) ([]db.Intent, error) {
	ins := make([]db.Intent, 0, len(remove))
	for _, name := range remove {
		trash, err := os.MkdirTemp(r.path(".pkg", "trash"), name+".")
		if err != nil {
			r.dropTrash(ins)
			return nil, fmt.Errorf("remove %s: %w", name, err)
		}
		rel, _ := filepath.Rel(r.dir, trash)
		ins = append(ins, db.Intent{Op: "remove", Name: name, Staging: rel})
	}
	return ins, nil
}

// dropTrash deletes the trees removal intents moved to the trash, or the empty directories
// reserved for them, unless an intent is still pending: then the next start decides.
func (r *Root) dropTrash(ins []db.Intent) {
	if len(ins) == 0 || !r.recorded(ins) {
		return
	}
	for _, in := range ins {
		removeTree(r.path(in.Staging))
	}
}

// keep leaves staged trees to the next start (reconcile) instead of Discard: after a
// failure past the intents, one of them may be the only copy of a tree the database still
// describes, or may describe again once an unsynced write is lost.
func keep(staged []*Staged) {
	for _, s := range staged {
		s.keep = true
	}
}

// recorded reports whether none of ins is pending any more: a database write that failed
// after its meta page was written (in its last fdatasync) may have committed, and then
// the trees must not go back under the new records.
func (r *Root) recorded(ins []db.Intent) bool {
	pending, err := r.db.Intents()
	if err != nil {
		return false
	}
	for _, p := range pending {
		for _, in := range ins {
			if p.Name == in.Name && p.Staging == in.Staging {
				return false
			}
		}
	}
	return true
}

// installError names the packages of a commit that failed as a whole.
func installError(staged []*Staged, err error) error {
	names := make([]string, len(staged))
	for i, s := range staged {
		names[i] = s.rec.Name + " " + s.rec.Version
	}
	return fmt.Errorf("install %s: %w", strings.Join(names, ", "), err)
}

// intents notes what each staged package replaces, prepares its command links and returns
// the intents of its commit.
func (r *Root) intents(staged []*Staged) ([]db.Intent, error) {
	ins := make([]db.Intent, len(staged))
	for i, s := range staged {
		if old, err := r.db.Get(s.rec.Name); err == nil {
			s.res.Previous = old.Version
		}
		ino, ok := inode(s.dir)
		if !ok {
			return nil, fmt.Errorf("install %s %s: staged tree %s is gone", s.rec.Name, s.rec.Version, s.dir)
		}
		if err := r.prepareLinks(s.rec); err != nil {
			return nil, fmt.Errorf("install %s %s: %w", s.rec.Name, s.rec.Version, err)
		}
		rel, _ := filepath.Rel(r.dir, s.dir)
		ins[i] = db.Intent{Op: "install", Name: s.rec.Name, Staging: rel, Inode: ino}
	}
	return ins, nil
}

// undoAll puts back the trees of the first n intents, whose swaps or renames were done, and
// clears every intent: nothing failed that a retry could mask. If that fails, the staged
// trees are kept for the next start.
func (r *Root) undoAll(staged []*Staged, ins []db.Intent, n int) error {
	err := r.rollbackAll(staged, ins[:n])
	if err == nil {
		var errs []error
		for _, in := range ins {
			errs = append(errs, r.undo(in))
		}
		err = errors.Join(errs...)
	}
	if err != nil {
		keep(staged)
	}
	return err
}

// rollbackAll puts back the trees of ins, the last swapped first, leaving the intents. If
// one cannot go back, the staged trees are kept for the next start.
func (r *Root) rollbackAll(staged []*Staged, ins []db.Intent) error {
	var errs []error
	for _, in := range slices.Backward(ins) {
		errs = append(errs, r.rollback(in))
	}
	err := errors.Join(errs...)
	if err != nil {
		keep(staged)
	}
	return err
}
