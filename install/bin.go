package install

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"pkg/db"
	"pkg/repo"
)

// binTarget is where <root>/bin/<command> points for a package's bin entry.
func binTarget(pkg, bin string) string {
	_, file := repo.SplitBin(bin)
	return "../pkgs/" + pkg + "/" + path.Clean(file)
}

// command is the name in <root>/bin of a bin entry's command.
func command(bin string) string {
	cmd, _ := repo.SplitBin(bin)
	return cmd
}

// checkBins refuses p when one of its commands is a file pkg does not manage, and returns
// the commands of p that are symlinks changed by hand: the installed version of p declares
// them, and committing p points them back (ownLinks). A file of the user's in the place of
// a command is never replaced. Whether another package provides a command is checked at
// commit (checkApply), which knows what else the commit installs and removes.
func (r *Root) checkBins(p repo.Package) (own []string, err error) {
	var declared []string // the commands the installed version of p declares
	if rec, err := r.db.Get(p.Name); err == nil {
		for _, b := range rec.Bin {
			declared = append(declared, command(b))
		}
	} else if !errors.Is(err, db.ErrNotInstalled) {
		return nil, err
	}
	for _, b := range p.Bin {
		cmd := command(b)
		where := r.path("bin", cmd)
		t, err := os.Readlink(where)
		switch {
		case errors.Is(err, os.ErrNotExist) || err == nil && strings.HasPrefix(t, "../pkgs/"):
		case err == nil && slices.Contains(declared, cmd):
			own = append(own, cmd)
		default:
			return nil, fmt.Errorf("command %s exists and is not managed by pkg: remove or rename it, then try again", where)
		}
	}
	return own, nil
}

// ownLinks points back the commands of the staged packages that checkBins found changed by
// hand, if each is still a symlink that does not point into pkgs/.
func (r *Root) ownLinks(staged []*Staged) error {
	for _, s := range staged {
		for _, b := range s.rec.Bin {
			cmd := command(b)
			if !slices.Contains(s.own, cmd) {
				continue
			}
			if t, err := os.Readlink(r.path("bin", cmd)); err != nil || strings.HasPrefix(t, "../pkgs/") {
				continue // gone, a file now, or pkg's: syncBins' part
			}
			if err := r.link(cmd, binTarget(s.rec.Name, b)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLinked returns an error for each command of the staged packages that does not
// point at them: a file put in its place since checkBins looked.
func (r *Root) checkLinked(staged []*Staged) error {
	var errs []error
	for _, s := range staged {
		for _, b := range s.rec.Bin {
			cmd := command(b)
			if t, err := os.Readlink(r.path("bin", cmd)); err != nil || t != binTarget(s.rec.Name, b) {
				errs = append(errs, fmt.Errorf("command %s of %s is not linked: something else is in its place; remove or rename it, then run pkg install --reinstall %s",
					r.path("bin", cmd), s.rec.Name, s.rec.Name))
			}
		}
	}
	return errors.Join(errs...)
}

// LinksError is returned when a change was committed, or an interrupted one completed,
// but bin/ could not be made to agree with it: the packages are as recorded, and some
// command link is missing, stale or dangling until a later command can fix bin/.
type LinksError struct {
	Dir string // the root's bin directory
	Err error
}

func (e *LinksError) Error() string {
	return fmt.Sprintf("could not update the command links in %s: %v", e.Dir, e.Err)
}

func (e *LinksError) Unwrap() error { return e.Err }

// syncBins makes <root>/bin hold the links the database's packages declare: links into
// pkgs/ that no package declares are removed, and with create, or when a link is being
// prepared (a commit cut short), the missing or different ones are made; other files are
// left alone. Otherwise a link a package declares is left as it is, missing or not, for
// verify to report.
func (r *Root) syncBins(create bool) error {
	want, err := r.wantBins()
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(r.path("bin"))
	if err != nil {
		return err
	}
	create = create || slices.ContainsFunc(ents, func(e os.DirEntry) bool { return pendingLink(e.Name()) })
	var pending []string
	for _, e := range ents {
		t, err := os.Readlink(r.path("bin", e.Name()))
		w, declared := want[e.Name()]
		if err != nil || !strings.HasPrefix(t, "../pkgs/") || w == t || declared && !create {
			delete(want, e.Name())
			continue
		}
		if pendingLink(e.Name()) {
			pending = append(pending, e.Name()) // from prepareLinks: link renames it, or it goes below
			continue
		}
		if err := os.Remove(r.path("bin", e.Name())); err != nil {
			return err
		}
	}
	if create {
		for cmd, t := range want {
			if err := r.link(cmd, t); err != nil {
				return err
			}
		}
	}
	for _, name := range pending {
		if err := os.Remove(r.path("bin", name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (r *Root) wantBins() (map[string]string, error) {
	all, err := r.db.List()
	if err != nil {
		return nil, err
	}
	want := make(map[string]string)
	for _, p := range all {
		for _, b := range p.Bin {
			want[command(b)] = binTarget(p.Name, b)
		}
	}
	return want, nil
}

// prepareLinks creates the command links of p that are missing or point elsewhere, under
// their temporary names, before p is committed: once its record is written only renames
// remain, and a full filesystem can no longer fail an install that has committed.
func (r *Root) prepareLinks(p *db.Package) (made []string, err error) {
	for _, b := range p.Bin {
		cmd, target := command(b), binTarget(p.Name, b)
		if t, err := os.Readlink(r.path("bin", cmd)); err == nil && t == target {
			continue
		}
		ok, err := r.pending(cmd, target)
		if ok {
			made = append(made, cmd)
		}
		if err != nil {
			return made, err
		}
	}
	return made, nil
}

// pending makes <root>/bin/.cmd.new a link to target, unless it is one already, and
// reports whether it made one. It replaces only a link of pkg's (into pkgs/).
func (r *Root) pending(cmd, target string) (bool, error) {
	tmp := r.path("bin", "."+cmd+".new")
	t, err := os.Readlink(tmp)
	switch {
	case err == nil && t == target:
		return false, nil
	case err == nil && strings.HasPrefix(t, "../pkgs/"):
		if err := os.Remove(tmp); err != nil {
			return false, err
		}
	case !errors.Is(err, os.ErrNotExist):
		return false, fmt.Errorf("%s is in the way of command %s: remove or rename it, then try again", tmp, cmd)
	}
	return true, os.Symlink(target, tmp)
}

// dropPending removes the links prepareLinks made for cmds, when they are still those.
func (r *Root) dropPending(staged []*Staged, made [][]string) {
	for i, cmds := range made {
		for _, b := range staged[i].rec.Bin {
			cmd := command(b)
			tmp := r.path("bin", "."+cmd+".new")
			if t, err := os.Readlink(tmp); err == nil && t == binTarget(staged[i].rec.Name, b) && slices.Contains(cmds, cmd) {
				os.Remove(tmp)
			}
		}
	}
}

// pendingLink reports whether the bin/ entry name is a link being prepared (".cmd.new").
func pendingLink(name string) bool {
	return len(name) > len("..new") && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".new")
}

// link points <root>/bin/cmd at target, replacing what is there by rename.
func (r *Root) link(cmd, target string) error {
	if _, err := r.pending(cmd, target); err != nil {
		return err
	}
	return os.Rename(r.path("bin", "."+cmd+".new"), r.path("bin", cmd))
}
