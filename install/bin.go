package install

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"pkg/repo"
)

// binTarget is where <root>/bin/<command> points for a package's declared bin path.
func binTarget(pkg, bin string) string { return "../pkgs/" + pkg + "/" + path.Clean(bin) }

// checkBins refuses p when one of its commands is provided by another installed package or
// is a file pkg does not manage.
func (r *Root) checkBins(p repo.Package) error {
	all, err := r.db.List()
	if err != nil {
		return err
	}
	for _, b := range p.Bin {
		cmd := path.Base(b)
		for _, q := range all {
			if q.Name != p.Name && containsBin(q.Bin, cmd) {
				return fmt.Errorf("command %q is already provided by package %s", cmd, q.Name)
			}
		}
		t, err := os.Readlink(r.path("bin", cmd))
		if err == nil && strings.HasPrefix(t, "../pkgs/") || errors.Is(err, os.ErrNotExist) {
			continue
		}
		return fmt.Errorf("command %s exists and is not managed by pkg", r.path("bin", cmd))
	}
	return nil
}

func containsBin(bins []string, cmd string) bool {
	for _, b := range bins {
		if path.Base(b) == cmd {
			return true
		}
	}
	return false
}

// syncBins makes <root>/bin hold exactly the links the database's packages declare. Links
// into pkgs/ that no package declares are removed; other files are left alone.
func (r *Root) syncBins() error {
	want, err := r.wantBins()
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(r.path("bin"))
	if err != nil {
		return err
	}
	for _, e := range ents {
		t, err := os.Readlink(r.path("bin", e.Name()))
		if err != nil || !strings.HasPrefix(t, "../pkgs/") || want[e.Name()] == t {
			delete(want, e.Name())
			continue
		}
		if err := os.Remove(r.path("bin", e.Name())); err != nil {
			return err
		}
	}
	for cmd, t := range want {
		if err := r.link(cmd, t); err != nil {
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
			want[path.Base(b)] = binTarget(p.Name, b)
		}
	}
	return want, nil
}

// link points <root>/bin/cmd at target, replacing what is there by rename.
func (r *Root) link(cmd, target string) error {
	tmp := r.path("bin", "."+cmd+".new")
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, r.path("bin", cmd))
}
