package install

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pkg/db"
)

// CommitAll commits staged trees together, so that the root holds either all of them or
// none: after one sync, one transaction records an intent for each, every tree is swapped
// in, one fsync of pkgs/ makes the swaps durable, and one transaction records every
// package and clears the intents. On an error it puts every old tree back; after a crash
// the next start does (see reconcile). It costs two transactions and one directory fsync
// in all, where Commit pays them for each package.
func (r *Root) CommitAll(staged ...*Staged) ([]*Result, error) {
	defer r.Discard(staged...)
	if len(staged) == 0 {
		return nil, nil
	}
	if err := r.syncfs(staged[0].dir); err != nil {
		return nil, installError(staged, err)
	}
	ins, err := r.intents(staged)
	if err != nil {
		return nil, err
	}
	if err := r.db.SetIntents(ins); err != nil {
		return nil, installError(staged, err)
	}
	for i, s := range staged {
		if err := r.swapIn(s.dir, r.pkgDir(s.rec.Name)); err != nil {
			uerr := r.undoAll(ins, i)
			if uerr != nil {
				keep(staged)
			}
			return nil, fmt.Errorf("install %s %s: %w", s.rec.Name, s.rec.Version, errors.Join(err, uerr))
		}
	}
	// From here a failed fsync or write is not retried (see rollback): the trees go back and
	// the intents stay for the next start to complete.
	if err := r.syncDir(r.path("pkgs")); err != nil {
		return nil, installError(staged, errors.Join(err, r.rollbackAll(staged, ins)))
	}
	now := time.Now().UTC()
	recs, files := make([]*db.Package, len(staged)), make([][]db.File, len(staged))
	for i, s := range staged {
		s.rec.Installed = now
		recs[i], files[i] = s.rec, s.files
	}
	if err := r.db.CommitAll(recs, files); err != nil {
		if r.recorded(ins) {
			keep(staged)
			return nil, installError(staged, err)
		}
		return nil, installError(staged, errors.Join(err, r.rollbackAll(staged, ins)))
	}
	results := make([]*Result, len(staged))
	for i, s := range staged {
		s.res.Elapsed = time.Since(s.start)
		results[i] = s.res
	}
	return results, r.syncBins()
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
	provider := make(map[string]string) // command → the staged package providing it
	for _, s := range staged {
		for _, b := range s.rec.Bin {
			cmd := path.Base(b)
			if other, ok := provider[cmd]; ok && other != s.rec.Name {
				return nil, fmt.Errorf("install %s %s: command %q is also provided by %s, installed with it",
					s.rec.Name, s.rec.Version, cmd, other)
			}
			provider[cmd] = s.rec.Name
		}
	}
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

// undoAll puts back the trees of the first n intents, whose swaps were done, and clears
// every intent: nothing failed that a retry could mask.
func (r *Root) undoAll(ins []db.Intent, n int) error {
	if err := r.rollbackAll(nil, ins[:n]); err != nil {
		return err
	}
	var errs []error
	for _, in := range ins {
		errs = append(errs, r.undo(in))
	}
	return errors.Join(errs...)
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
