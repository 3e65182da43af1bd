package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/repo"
)

// Delta is what makes a root hold exactly a set of packages.
type Delta struct {
	Install []repo.Package // wanted and not installed as wanted, in the order wanted
	Remove  []string       // installed and not wanted, by key (db.Record.Key)
	Keep    []string       // installed as wanted, by key
}

// Plan compares the installed packages with want, one package per key (Package.Key: a
// name, or an npm instance's NAME@VERSION). A package is installed as wanted when its
// version, archive sha256, depends and commands all match and its tree is there; any other
// version, older or newer, is replaced, and a tree deleted by hand is installed again.
func (r *Root) Plan(want []repo.Package) (*Delta, error) {
	all, err := r.db.List()
	if err != nil {
		return nil, err
	}
	have := make(map[string]db.Record, len(all))
	for _, p := range all {
		have[p.Key()] = p
	}
	plan := &Delta{}
	for _, p := range want {
		if cur, ok := have[p.Key()]; ok && cur.Installs(p) && r.hasTree(p.Key()) {
			plan.Keep = append(plan.Keep, p.Key())
		} else {
			plan.Install = append(plan.Install, p)
		}
		delete(have, p.Key())
	}
	for _, p := range all {
		if _, ok := have[p.Key()]; ok {
			plan.Remove = append(plan.Remove, p.Key())
		}
	}
	slices.Sort(plan.Keep)
	return plan, nil
}

// hasTree reports whether the tree of the package key is a directory, or may be: only its
// absence is sure.
func (r *Root) hasTree(key string) bool {
	var st unix.Stat_t
	err := r.stat(treeOf(key), &st)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR || err != nil && !errors.Is(err, unix.ENOENT)
}

// TreesGone returns the keys of the packages recs records in the root dir whose trees
// pkgs/ no longer holds (deleted by hand; or not a directory, as hasTree judges them):
// read without the root's lock, as a plan is; none where dir is "" (no root).
func TreesGone(dir string, recs []db.Record) []string {
	if dir == "" {
		return nil
	}
	var keys []string
	for _, r := range recs {
		fi, err := os.Lstat(filepath.Join(dir, partRel(pkgs), repo.FileName(r.Key())))
		if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
			keys = append(keys, r.Key())
		}
	}
	return keys
}
