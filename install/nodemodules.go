package install

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/repo"
	"pkg/tarutil"
)

// The node_modules layout of npm instances is pnpm's (design.md, The node_modules layout):
// an instance's files at lib/node_modules/.pnpm/FILENAME@VERSION/node_modules/NAME, its
// dependencies as symlinks beside them, a requested package's lib/node_modules/NAME. These
// symlinks and their directories are generated: owned by their instance in the paths
// bucket (db.Owners.Link), they follow the records at every commit.

// nodeModules is where the layout is in the prefix.
const nodeModules = "lib/node_modules"

// hoisted holds a link to every npm name installed, as pnpm's hoist-pattern * makes one
// (pkg links the highest version; which one pnpm links follows its dependency graph, not
// checked against pkg's): Node looks there from every instance after its own dependencies,
// so that a package finds one it requires without declaring it (eslint-module-utils
// loading eslint-plugin-import's eslint-import-resolver-node).
const hoisted = nodeModules + "/.pnpm/node_modules"

// hoistRecorded reports whether the database records the owners of hoisted: a root
// installed before the hoisted links has none until its next change makes them.
func (r *Root) hoistRecorded() (bool, error) {
	rec, err := r.db.Owners([]string{hoisted})
	_, ok := rec[hoisted]
	return ok, err
}

// testHookUnhoisted, where a test sets it, has generated leave out the hoisted links, as
// a pkg without them did.
var testHookUnhoisted bool

// npmDir returns the node_modules directory of the npm instance name@version: its files
// at npmDir/name, its dependencies' links beside them.
func npmDir(name, version string) string {
	return nodeModules + "/.pnpm/" + repo.FileName(name) + "@" + version + "/node_modules"
}

// npmInto returns the Into of the npm instance name@version: where its tarball's one top
// directory is in the prefix.
func npmInto(name, version string) string { return npmDir(name, version) + "/" + name }

// intoOf returns the Into a package is recorded with: its index entry's, or, for an npm
// package, its place in the node_modules layout.
func intoOf(p *repo.Package) string {
	if p.Kind == repo.KindNPM {
		return npmInto(p.Name, p.Version)
	}
	return p.Into
}

// relTo returns the relative path from the directory dir of the prefix, which p is not
// in, to the prefix path p: "../../debug@4.4.3/node_modules/debug" from
// .pnpm/eslint@9.39.2/node_modules.
func relTo(dir, p string) string {
	for {
		d, rest, _ := strings.Cut(dir, "/")
		q, prest, ok := strings.Cut(p, "/")
		if !ok || d != q {
			break
		}
		dir, p = rest, prest
		if dir == "" {
			return p
		}
	}
	return strings.Repeat("../", strings.Count(dir, "/")+1) + p
}

// npmSet is the npm instances of a root, by name, highest version first.
type npmSet map[string][]*db.Record

func newNPMSet(recs map[string]*db.Record) npmSet {
	s := make(npmSet)
	for _, p := range recs {
		if p.Kind == repo.KindNPM {
			s[p.Name] = append(s[p.Name], p)
		}
	}
	for _, ps := range s {
		slices.SortFunc(ps, func(a, b *db.Record) int { return -repo.CompareNPMVersions(a.Version, b.Version) })
	}
	return s
}

// resolve returns the instance q resolves to: the highest version installed that q
// allows; nil if none.
func (s npmSet) resolve(q repo.Requirement) *db.Record {
	for _, p := range s[q.Name] {
		if q.Allows(p.Version) {
			return p
		}
	}
	return nil
}

// generated returns the paths the layout generates for the npm instances of recs, each
// with its owners, when requested holds the keys of those asked for: the links of each
// instance's dependencies, peers and optional dependencies that resolve (a dependency on
// itself aside), the links of the requested instances (of two of one name, the higher),
// the hoisted link of every name (to its highest version) and their directory, and the
// @SCOPE directories that scoped names' links need and no member gives. It reads
// nothing: the records say it all, before and after a change alike.
func generated(recs map[string]*db.Record, requested map[string]repo.Requirement) map[string]db.Owners {
	s := newNPMSet(recs)
	gen := make(map[string]db.Owners)
	add := func(dir, name, target, owner string) {
		if scope, _, ok := strings.Cut(name, "/"); ok {
			d := dir + "/" + scope
			o := gen[d]
			if i, found := slices.BinarySearch(o.Names, owner); !found {
				o.Dir, o.Names = true, slices.Insert(o.Names, i, owner)
			}
			gen[d] = o
		}
		p := dir + "/" + name
		gen[p] = db.Owners{Link: relTo(tarutil.Parent(p), target), Names: []string{owner}}
	}
	for _, name := range slices.Sorted(maps.Keys(s)) {
		for _, p := range s[name] {
			dir := npmDir(p.Name, p.Version)
			for _, q := range slices.Concat(p.Depends, p.Peers, p.Optional) {
				d := s.resolve(q)
				if d == nil || d.Name == p.Name {
					continue
				}
				if _, ok := gen[dir+"/"+q.Name]; !ok { // a peer also a dependency: the dependency's
					add(dir, q.Name, npmInto(d.Name, d.Version), key(p))
				}
			}
		}
		if i := slices.IndexFunc(s[name], func(p *db.Record) bool { _, ok := requested[key(p)]; return ok }); i >= 0 {
			p := s[name][i]
			add(nodeModules, name, npmInto(p.Name, p.Version), key(p))
		}
		if p := s[name][0]; !testHookUnhoisted {
			add(hoisted, name, npmInto(p.Name, p.Version), key(p))
			o := gen[hoisted]
			o.Dir, o.Names = true, append(o.Names, key(p))
			gen[hoisted] = o
		}
	}
	slices.Sort(gen[hoisted].Names) // by key, not by name: "a-b@1" before "a@1"
	return gen
}

// ownsScope reports whether p's members list the @SCOPE directory d: a scoped
// instance's scope directory in its own node_modules, which its links may need too.
func ownsScope(p *db.Record, d string) bool { return strings.HasPrefix(p.Into, d+"/") }

// asksNPM reports whether requests, by key, ask for an installed npm instance not asked
// for before, or unasked (keys) takes the request of one away: its link in
// lib/node_modules and its commands follow, as a change of the prefix.
func (r *Root) asksNPM(requests map[string]repo.Requirement, unasked []string) bool {
	if len(requests) == 0 && len(unasked) == 0 {
		return false
	}
	before, err := r.db.Requested()
	if err != nil {
		return true // the commit reads them again, and says why it cannot
	}
	npm := func(k string) bool {
		p, err := r.db.Get(k)
		return err == nil && p.Kind == repo.KindNPM
	}
	for k := range requests {
		if _, ok := before[k]; !ok && npm(k) {
			return true
		}
	}
	for _, k := range unasked {
		if _, ok := before[k]; ok && npm(k) {
			return true
		}
	}
	return false
}

// layoutChange is what a change does to the generated paths: those whose owners differ
// between the records before and after it.
type layoutChange struct {
	before, after map[string]db.Owners  // generated(), before and after
	recs          map[string]*db.Record // after, by key
	paths         []string              // changed, sorted
}

// newLayoutChange compares the generated paths of the npm instances installed (by key)
// and of those the change leaves, with the requests before and after. The paths of an
// instance the change installs are its too, changed or not: installing one again puts
// back what of its own the user lost (pkg verify's advice). A root without npm instances
// costs a look at each record.
func newLayoutChange(installed, after, incoming map[string]*db.Record, reqBefore, reqAfter map[string]repo.Requirement) *layoutChange {
	l := &layoutChange{before: generated(installed, reqBefore), after: generated(after, reqAfter), recs: after}
	for p, o := range l.before {
		a := l.after[p]
		if !sameOwners(o, a) || slices.ContainsFunc(a.Names, func(n string) bool { return incoming[n] != nil }) {
			l.paths = append(l.paths, p)
		}
	}
	for p := range l.after {
		if _, ok := l.before[p]; !ok {
			l.paths = append(l.paths, p)
		}
	}
	slices.Sort(l.paths)
	return l
}

// hoistAll adds to l's paths every one it generates under hoisted: the change makes them
// all, in a root that does not record them.
func (l *layoutChange) hoistAll() {
	changed := l.paths // sorted
	for p := range l.after {
		if _, found := slices.BinarySearch(changed, p); within(p, hoisted) && !found {
			l.paths = append(l.paths, p)
		}
	}
	slices.Sort(l.paths)
}

func sameOwners(a, b db.Owners) bool {
	return a.Dir == b.Dir && a.Link == b.Link && slices.Equal(a.Names, b.Names)
}

// apply sets in next the owners of each changed path: owners, as recorded, less what the
// layout generated there before and plus what it generates after; a link where another
// package has the path, or a directory where another has a file, is a *ConflictError.
// It returns the links it moves or takes out, as recorded.
func (l *layoutChange) apply(next, owners map[string]db.Owners, c *conflicts) (map[string]db.OldLink, error) {
	var olds map[string]db.OldLink
	for _, p := range l.paths {
		o, was := next[p], owners[p]
		if was.Link != "" {
			if olds == nil {
				olds = make(map[string]db.OldLink)
			}
			olds[p] = db.OldLink{Target: was.Link, Owner: was.Names[0]}
		}
		if b := l.before[p]; b.Link != "" || b.Dir {
			o.Names = slices.DeleteFunc(slices.Clone(o.Names), func(n string) bool {
				_, generated := slices.BinarySearch(b.Names, n) // sorted, as the record's
				return generated && (b.Link != "" || l.recs[n] == nil || !ownsScope(l.recs[n], p))
			})
		}
		if len(o.Names) == 0 {
			o = db.Owners{}
		}
		switch a := l.after[p]; {
		case a.Link != "" && len(o.Names) > 0:
			return nil, c.conflict(p, l.recs[a.Names[0]], o.Names[0], false, o.Dir)
		case a.Link != "":
			o = a
		case a.Dir && len(o.Names) > 0 && !o.Dir:
			return nil, c.conflict(p, l.recs[a.Names[0]], o.Names[0], true, false)
		case a.Dir:
			o.Dir = true
			for _, n := range a.Names {
				if i, found := slices.BinarySearch(o.Names, n); !found {
					o.Names = slices.Insert(o.Names, i, n)
				}
			}
		}
		next[p] = o
	}
	return olds, nil
}

// verifyLinks reports the generated paths of the packages recs where the prefix does not
// hold what the records of all and the requests say: a link with another target, or
// missing, or a directory that is not one. One fstatat or readlinkat per path.
func (r *Root) verifyLinks(all map[string]*db.Record, recs []db.Record) ([]FileError, error) {
	if !slices.ContainsFunc(recs, func(p db.Record) bool { return p.Kind == repo.KindNPM }) {
		return nil, nil
	}
	reqs, err := r.db.Requested()
	if err != nil {
		return nil, err
	}
	verified := make(map[string]*db.Record, len(recs))
	for i := range recs {
		verified[key(&recs[i])] = &recs[i]
	}
	gen := generated(all, reqs)
	if done, err := r.hoistRecorded(); err != nil {
		return nil, err
	} else if !done { // a root installed before them: its next change makes them
		maps.DeleteFunc(gen, func(p string, _ db.Owners) bool { return within(p, hoisted) })
	}
	dst := r.prefixDirs()
	defer dst.close()
	var problems []FileError
	for _, p := range slices.Sorted(maps.Keys(gen)) {
		o := gen[p]
		i := slices.IndexFunc(o.Names, func(n string) bool { return verified[n] != nil })
		if i < 0 {
			continue
		}
		var cur unix.Stat_t
		dir, base, err := dst.parent(p)
		if err == nil {
			err = unix.Fstatat(dir, base, &cur, unix.AT_SYMLINK_NOFOLLOW)
		}
		var what error
		switch {
		case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
			what = found(ErrMissing, ErrPrefix)
		case err != nil:
			what = found(ErrUnreadable, ErrPrefix, err)
		case o.Dir && cur.Mode&unix.S_IFMT != unix.S_IFDIR, !o.Dir && cur.Mode&unix.S_IFMT != unix.S_IFLNK:
			what = found(ErrModified, ErrPrefix, ErrType)
		case !o.Dir && readlinkat(dir, base) != o.Link:
			what = found(ErrModified, ErrPrefix, ErrLinkTarget)
		default:
			continue
		}
		q := verified[o.Names[i]]
		problems = append(problems, FileError{Package: q.Name, Version: q.Version, Kind: q.Kind, Path: r.path(p), Err: what})
	}
	return problems, nil
}

// key is the key the root's records and the paths bucket's owners name p by.
func key(p *db.Record) string { return p.Key() }
