package install

import (
	"errors"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/repo"
	"pkg/tarutil"
)

// Folding: a directory of the prefix whose whole subtree one package alone lists, after the
// change, is that package's own directory, moved into the prefix by one rename (folded),
// instead of a directory of hard links: the kernel tree's 78,579 links become one rename,
// and its removal one rename back. An empty placeholder stays at its place in pkgs/NAME, and
// Record.Folded names it. A second package listing the directory or a path under it has it
// moved back (unfolded) and linked file by file, in the same roll-forward.

// sharedDirs are the directories of the hierarchy where packages meet, by path.Match
// pattern: never folded, as a second package is likely to come and unfold them. Who owns
// a path decides whether it may fold; this table only keeps folds where they would not last.
var sharedDirs = []string{
	"usr", "usr/bin", "usr/sbin", "usr/games", "usr/lib", "usr/lib/*-linux-*", "usr/lib/*-linux-*/*",
	"usr/lib64", "usr/libexec", "usr/include", "usr/include/*-linux-*", "usr/src",
	"usr/lib/pkgconfig", "usr/lib/systemd", "usr/lib/systemd/*", "usr/lib/udev", "usr/lib/udev/*",
	"usr/lib/tmpfiles.d", "usr/lib/sysusers.d", "usr/lib/mime", "usr/lib/mime/*",
	"usr/lib/python3*", "usr/lib/python3*/*-packages", "usr/lib/python3/dist-packages",
	"usr/share", "usr/share/doc", "usr/share/doc-base", "usr/share/man", "usr/share/man/*", "usr/share/man/*/man*",
	"usr/share/info", "usr/share/locale", "usr/share/locale/*", "usr/share/locale/*/*",
	"usr/share/icons", "usr/share/icons/*", "usr/share/icons/*/*", "usr/share/icons/*/*/*",
	"usr/share/applications", "usr/share/pixmaps", "usr/share/fonts", "usr/share/fonts/*",
	"usr/share/java", "usr/share/perl5", "usr/share/lintian", "usr/share/lintian/overrides",
	"usr/share/bash-completion", "usr/share/bash-completion/completions", "usr/share/zsh",
	"usr/share/zsh/*", "usr/share/fish", "usr/share/fish/*", "usr/share/mime", "usr/share/mime/*",
	"usr/share/pkgconfig", "usr/share/aclocal", "usr/share/common-licenses", "usr/share/menu",
	"usr/share/metainfo", "usr/share/glib-2.0", "usr/share/glib-2.0/*", "usr/share/dbus-1", "usr/share/dbus-1/*",
	"usr/share/gtk-doc", "usr/share/gtk-doc/html", "usr/share/emacs", "usr/share/emacs/site-lisp",
	"usr/share/vim", "usr/share/vim/*", "usr/share/python3", "usr/share/X11", "usr/share/X11/*",
	"usr/local", "usr/local/*", "usr/local/lib/python3*", "usr/local/lib/python3*/*-packages",
	"etc", "etc/*", "var", "var/*", "var/lib/*", "lib", "lib64", "lib/*-linux-*", "lib/*-linux-*/*",
	"lib/systemd", "lib/systemd/*", "lib/udev", "lib/udev/*", "lib/python3*", "lib/python3*/*-packages",
	"lib/pkgconfig", "include", "share", "share/*", "sbin", "opt", "srv", "boot", "run", "tmp",
	"home", "root", "mnt", "media",
}

// minFold is the fewest entries a directory's subtree must hold, itself included, to be
// folded: a fold costs a rename, a placeholder and its record where a link costs one
// linkat per file, so below it folding saves nothing, and a small tree keeps its files in
// one place.
const minFold = 16

// foldable reports whether the prefix path of a directory may be folded, as the hierarchy
// goes: not one of sharedDirs, nor under bin/ (pkg's command links) or lib/node_modules
// (where the prefix links packages to each other: only an instance's own directory folds
// there, ownDir).
func foldable(p string) bool {
	for _, under := range []string{"bin", "lib/node_modules"} {
		if p == under || strings.HasPrefix(p, under+"/") {
			return false
		}
	}
	return !slices.ContainsFunc(sharedDirs, func(pat string) bool {
		ok, _ := path.Match(pat, p)
		return ok
	})
}

// ownDir reports whether the prefix path p is the npm instance rec's own directory (its
// Into, beneath lib/node_modules): its name and version are in the path, so no other
// package lists it or a path beneath it, and its rename and placeholder cost less than
// the mkdir and linkat of each of its entries at any size (its smallest hold four).
func ownDir(rec *db.Record, p string) bool { return rec.Kind == repo.KindNPM && p == rec.Into }

// foldsOf returns the prefix paths of p's folded directories.
func foldsOf(p *db.Record) []string {
	ds := make([]string, len(p.Folded))
	for i, m := range p.Folded {
		ds[i] = prefixPath(m, p.Into)
	}
	return ds
}

// within reports whether the path p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// planFolds decides what a change folds and moves back, given each path's owners after it
// (next, every path of the change): the trees leaving (upgraded or removed) take their
// folded directories back; each staged package folds its topmost directories that it alone
// lists after the change, that are foldable and hold minFold entries or more (or are an
// npm instance's own, ownDir), that it may move (a directory moved to another parent must
// be writable) and that the prefix lacks (or holds folded by its version before); an
// installed package that stays has a folded directory that another now lists moved back
// into its tree, and its paths under it, which next gains, linked. It returns the folds in
// the order the roll-forward makes them, and the new Record.Folded of the packages
// unfolded. It reads one status per candidate directory.
func (r *Root) planFolds(installed map[string]*db.Record, staged []*Staged, leaving map[string]bool, next map[string]db.Owners) ([]db.Fold, map[string][]string, error) {
	var folds []db.Fold
	for _, name := range slices.Sorted(maps.Keys(leaving)) {
		p := installed[name]
		for _, m := range p.Folded {
			d := prefixPath(m, p.Into)
			var st unix.Stat_t
			if r.stat(prefixPlace(d), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				folds = append(folds, db.Fold{Name: name, Member: m, Path: d, Old: st.Ino})
			}
		}
	}
	for _, s := range staged {
		s.rec.Folded = nil
		top, key := "", s.rec.Key()
		for i, e := range s.entries {
			if top != "" && within(e.path, top) || !e.dir || e.member == "" || !ownDir(s.rec, e.path) && (!foldable(e.path) || !atLeast(s.entries[i+1:], e.path, minFold-1)) {
				continue
			}
			if o := next[e.path]; len(o.Names) != 1 || o.Names[0] != key {
				continue
			}
			i := slices.IndexFunc(folds, func(f db.Fold) bool { return f.Name == key && f.Path == e.path })
			var st unix.Stat_t
			if err := r.stat(prefixPlace(e.path), &st); err == nil && (i < 0 || st.Ino != folds[i].Old) || err != nil && !errors.Is(err, unix.ENOENT) {
				continue // linked file by file, the user's, or beneath the user's symlink: linked as it is
			}
			if err := r.stat(place{staging, s.name + "/" + e.member}, &st); err != nil {
				return nil, nil, &os.PathError{Op: "lstat", Path: r.pathOf(place{staging, s.name + "/" + e.member}), Err: err}
			}
			if st.Mode&0o200 == 0 && unix.Geteuid() != 0 {
				continue
			}
			switch {
			case i >= 0 && folds[i].Member == e.member: // one exchange puts the new in the old one's place
				folds[i].Ino = st.Ino
			default:
				folds = append(folds, db.Fold{Name: key, Member: e.member, Path: e.path, Ino: st.Ino})
			}
			s.rec.Folded = append(s.rec.Folded, e.member)
			top = e.path
		}
	}
	folded, err := r.planUnfolds(installed, leaving, next, &folds)
	return folds, folded, err
}

// atLeast reports whether es, sorted by path, holds n entries beneath dir or more.
func atLeast(es []prefixEntry, dir string, n int) bool {
	i, _ := slices.BinarySearchFunc(es, dir+"/", func(e prefixEntry, p string) int { return strings.Compare(e.path, p) })
	return len(es)-i >= n && strings.HasPrefix(es[i+n-1].path, dir+"/")
}

// planUnfolds adds to folds the directories of installed packages that stay that another
// package now lists, with the package's paths under them to next, and returns their new
// Record.Folded.
func (r *Root) planUnfolds(installed map[string]*db.Record, leaving map[string]bool, next map[string]db.Owners, folds *[]db.Fold) (map[string][]string, error) {
	var folded map[string][]string
	for _, name := range slices.Sorted(maps.Keys(installed)) {
		p := installed[name]
		if leaving[name] || len(p.Folded) == 0 {
			continue
		}
		var dirs []string
		for _, m := range p.Folded {
			d := prefixPath(m, p.Into)
			o, ok := next[d]
			if !ok || len(o.Names) == 1 && o.Names[0] == name {
				continue
			}
			var st unix.Stat_t
			if err := r.stat(prefixPlace(d), &st); err == nil {
				*folds = append(*folds, db.Fold{Name: name, Member: m, Path: d, Old: st.Ino, Back: relOf(treeOf(name))})
			}
			if folded == nil {
				folded = make(map[string][]string)
			}
			if _, ok := folded[name]; !ok {
				folded[name] = slices.Clone(p.Folded)
			}
			folded[name] = slices.DeleteFunc(folded[name], func(f string) bool { return f == m })
			dirs = append(dirs, d)
		}
		if err := r.addUnder(name, p.Into, dirs, next); err != nil {
			return nil, err
		}
	}
	return folded, nil
}

// addUnder adds to next the owners of the package name's paths at and under dirs that next
// lacks: as recorded, or, where the folded directory's key stood for them, name's alone.
func (r *Root) addUnder(name, into string, dirs []string, next map[string]db.Owners) error {
	if len(dirs) == 0 {
		return nil
	}
	_, files, err := r.db.Installed(name)
	if err != nil {
		return err
	}
	var keys []string
	isDir := make(map[string]bool)
	for _, e := range fileEntries(into, files[0]) {
		if _, ok := next[e.path]; !ok && slices.ContainsFunc(dirs, func(d string) bool { return within(e.path, d) }) {
			keys, isDir[e.path] = append(keys, e.path), e.dir
		}
	}
	if keys == nil {
		return nil // db.Owners(nil) would read every path
	}
	owners, err := r.db.Owners(keys)
	if err != nil {
		return err
	}
	for _, k := range keys {
		o, ok := owners[k]
		if !ok { // beneath the folded directory, whose key stood for it
			o = db.Owners{Dir: isDir[k], Names: []string{name}}
		}
		next[k] = o
	}
	r.looked += len(keys)
	return nil
}

// backPlace returns the place of a Fold's Back: a tree in staging or trash, or pkgs/NAME.
func backPlace(rel string) (place, bool) {
	if name, ok := strings.CutPrefix(rel, partRel(pkgs)+"/"); ok && name != "" && !strings.Contains(name, "/") {
		return place{pkgs, name}, true
	}
	return placeOf(rel)
}

// putBack moves the directory f.Old, folded at f.Path, back into its tree f.Back at
// f.Member, exchanged with the placeholder there; where the same package folds f.Path
// again (f.Ino), the new directory takes the old one's place first, in one exchange, so
// that the path is never empty, and the new tree keeps a placeholder. The inodes tell
// what is done.
func (rf *roll) putBack(f db.Fold) error {
	r := rf.r
	back, ok := backPlace(f.Back)
	if !ok {
		return errors.New("a folded directory's tree " + f.Back + " is not one of pkg's")
	}
	d, at := prefixPlace(f.Path), place{back.in, back.name + "/" + f.Member}
	if f.Ino == 0 {
		if err := rf.moveBack(f, d, at); err != nil || len(rf.owners[f.Path].Names) > 0 {
			return err // where another package lists the directory, it is linked into: as any of the prefix
		}
		return rf.save(f, d)
	}
	nw := place{pkgs, repo.FileName(f.Name) + "/" + f.Member}
	if cur, _ := r.inode(d); cur == f.Old {
		if ino, _ := r.inode(nw); ino == f.Ino {
			if err := errors.Join(foldStep(), r.exchange(nw, d)); err != nil {
				return err
			}
		}
	}
	if err := rf.moveBack(f, nw, at); err != nil {
		return err
	}
	if err := rf.save(f, nw); err != nil {
		return err
	}
	if cur, _ := r.inode(d); cur != f.Ino {
		return nil // not folded: verify says so
	}
	// Where the old tree lacked its placeholder (deleted by hand), nothing came back.
	return r.at(nw, func(fd int, base string) error { return rf.placeholder(nw, fd, base, nil) })
}

// moveBack moves the directory f.Old from d into its tree at at, exchanged with the
// placeholder there, or renamed where that is gone. Where the tree itself is gone (deleted
// by hand), the directories above at are made again, so that the old tree is where the
// pending record says and goes with it.
func (rf *roll) moveBack(f db.Fold, d, at place) error {
	r := rf.r
	if cur, ok := r.inode(d); !ok || cur != f.Old {
		return nil // done
	}
	if err := foldStep(); err != nil {
		return err
	}
	err := r.exchange(d, at)
	if errors.Is(err, unix.ENOENT) { // the placeholder, or the tree, is gone
		if err = r.rename(d, at); errors.Is(err, unix.ENOENT) {
			if err = r.mkdirAll(place{at.in, tarutil.Parent(at.name)}); err == nil {
				err = r.rename(d, at)
			}
		}
	}
	return err
}

// save keeps what the user put in f's placeholder, which came back at p in the place of the
// folded directory: each entry moved to .pkg/saved as beneath f.Path, as what the user put in
// the prefix is (keep). What is at p is the placeholder unless it is a directory of the
// package (f.Old, f.Ino); one rename an entry, so that a roll-forward run again after a
// crash moves what is left.
func (rf *roll) save(f db.Fold, p place) error {
	r := rf.r
	var st unix.Stat_t
	if err := r.stat(p, &st); errors.Is(err, unix.ENOENT) {
		return nil
	} else if err != nil {
		return &os.PathError{Op: "lstat", Path: r.pathOf(p), Err: unwrapPath(err)}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Ino == f.Old || st.Ino == f.Ino {
		return nil // the user's in the placeholder's place, moved with the rest; or the package's
	}
	names, err := r.names(p)
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, n := range names {
		if err := foldStep(); err != nil {
			return err
		}
		if err := rf.keepAt(place{p.in, p.name + "/" + n}, f.Path+"/"+n, f.Name); err != nil {
			return err
		}
	}
	return nil
}

// fold moves the new tree's directory f.Ino from pkgs/NAME/f.Member to f.Path, over the
// empty directory there, what else is there kept as the user's first, and leaves an empty
// placeholder in its place.
func (rf *roll) fold(f db.Fold, c *rollDirs) error {
	r := rf.r
	src, d := place{pkgs, repo.FileName(f.Name) + "/" + f.Member}, prefixPlace(f.Path)
	sfd, sbase, serr := c.src.parent(src.name)
	dfd, dbase, err := c.dst.parent(f.Path)
	var st unix.Stat_t
	if err == nil {
		err = unix.Fstatat(dfd, dbase, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err == nil && st.Ino == f.Ino {
		return rf.placeholder(src, sfd, sbase, serr)
	}
	var sst unix.Stat_t
	if serr != nil || unix.Fstatat(sfd, sbase, &sst, unix.AT_SYMLINK_NOFOLLOW) != nil || sst.Ino != f.Ino {
		return nil // not in its tree: verify says so
	}
	if err := foldStep(); err != nil {
		return err
	}
	rename := func() error {
		dfd, dbase, err := c.dst.parent(f.Path)
		if err == nil {
			err = unix.Renameat(sfd, sbase, dfd, dbase)
		}
		return r.renameError(src, d, err)
	}
	if err == nil {
		err = unix.ENOTEMPTY
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			err = rename()
		}
		if err != nil {
			if err := rf.keep(f.Path, f.Name); err != nil {
				return err
			}
			err = rename()
		}
	} else {
		err = rename()
	}
	if err != nil {
		return err
	}
	return rf.placeholder(src, sfd, sbase, nil)
}

// placeholder makes the empty directory p, base in the directory fd, where missing; err is
// why fd could not be reached, if it could not.
func (rf *roll) placeholder(p place, fd int, base string, err error) error {
	if err := foldStep(); err != nil {
		return err
	}
	if err == nil {
		err = unix.Mkdirat(fd, base, 0o755&^uint32(rf.r.umask))
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: rf.r.pathOf(p), Err: unwrapPath(err)}
	}
	return nil
}

// testHookFoldStep, where a test sets it, runs before each move of a fold; returning true,
// it ends the roll-forward there, as a crash would.
var testHookFoldStep func() bool

var errFoldCut = errors.New("install: roll-forward cut short by a test")

func foldStep() error {
	if testHookFoldStep != nil && testHookFoldStep() {
		return errFoldCut
	}
	return nil
}

// inFold reports whether the prefix path p is a directory folded once the change is done,
// or beneath one: the package's tree itself, in the prefix.
func (rf *roll) inFold(p string) bool {
	for d := p; d != "."; d = tarutil.Parent(d) {
		if rf.folded[d] {
			return true
		}
	}
	return false
}

// wasFolded reports whether the prefix path p is beneath a directory folded before the
// change, which went back into its tree with what it held.
func (rf *roll) wasFolded(p string) bool {
	return slices.ContainsFunc(rf.folds, func(f db.Fold) bool { return f.Old != 0 && p != f.Path && within(p, f.Path) })
}

// treeAt tells where a package's member is on disk: in its tree in pkgs/, or, beneath a
// directory folded into the prefix, at its prefix path.
type treeAt struct {
	tree   int // the package's directory
	prefix int // the root's
	into   string
	folded []string // Record.Folded
}

// at returns a descriptor and the path beneath it of the member rel ("." for the tree).
func (t *treeAt) at(rel string) (int, string) {
	for _, m := range t.folded {
		if within(rel, m) {
			return t.prefix, prefixPath(rel, t.into)
		}
	}
	return t.tree, rel
}

// treeAt returns where the members of p, whose tree is open at fd, are.
func (r *Root) treeAt(fd int, p *db.Record) *treeAt {
	return &treeAt{tree: fd, prefix: r.fd[top], into: p.Into, folded: p.Folded}
}
