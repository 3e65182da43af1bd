package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/repo"
)

// binTarget is where <root>/bin/<command> points for the bin entry of p whose prefix
// path is at: the prefix path, relative to bin/, never pkgs/ (programs that find their
// siblings through their executable's real path then find the prefix's).
func binTarget(at string) string { return "../" + at }

// cmdPath returns the prefix path of p's command b.
func cmdPath(p *db.Record, b repo.Command) string { return prefixPath(path.Clean(b.Path), p.Into) }

// wrapperHead starts the script pkg puts in bin/ for a command that needs library
// directories: a bin/ file that starts so is pkg's, as a symlink into pkgs/ is.
const wrapperHead = "#!/bin/sh\n# pkg: "

// maxWrapper bounds what readBin reads of a file in bin/ to tell whether it is pkg's.
const maxWrapper = 64 << 10 // 64 KiB

// binWants returns, by command, what <root>/bin holds for p's commands when the root holds
// all: a symlink's target ("../usr/bin/..."), or, when p or a package it depends on,
// directly or not, declares library directories, or p has env entries, a wrapper script
// that runs the command with them on LD_LIBRARY_PATH and in its environment. A command
// whose prefix path is bin/CMD itself needs no link, and has none here, unless it needs
// the wrapper: the wrapper then takes the member's place in the prefix. A command another
// package holds (holds, by command: a package replacing p's) has none either. A symlink
// costs nothing at run time; the script, a shell's start (about 1 ms), and it names the
// root by its absolute path.
func (r *Root) binWants(libs *libIndex, holds map[string]string, p *db.Record) map[string]string {
	bins := r.bins(p.Kind, p.Name, p.Version, p.Bin)
	wants := make(map[string]string, len(bins))
	if len(bins) == 0 {
		return wants
	}
	dirs := r.libDirs(libs, p)
	for _, b := range bins {
		if holds[b.Name] != p.Key() {
			continue
		}
		if w := r.binWant(dirs, p, b); w != "" {
			wants[b.Name] = w
		}
	}
	return wants
}

// binWant is what <root>/bin holds for the bin entry b of the package p, whose commands
// run with the library directories dirs (binWants); "" for none.
func (r *Root) binWant(dirs []string, p *db.Record, b repo.Command) string {
	at := cmdPath(p, b)
	self := at == "bin/"+b.Name
	if len(dirs) == 0 && len(p.Env) == 0 {
		if self {
			return ""
		}
		return binTarget(at)
	}
	exec := r.namedPath(at)
	if self {
		exec = r.namedPath("pkgs", repo.FileName(p.Key()), path.Clean(b.Path))
	}
	var w strings.Builder
	w.WriteString(wrapperHead + b.Name + " of " + p.Name)
	if len(dirs) > 0 {
		w.WriteString(", with the libraries of the packages it uses")
	}
	if len(p.Env) > 0 {
		w.WriteString(", with its package's environment")
	}
	w.WriteString("\n")
	if len(dirs) > 0 {
		w.WriteString("LD_LIBRARY_PATH=" + shellQuote(strings.Join(dirs, ":")) + "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n" +
			"export LD_LIBRARY_PATH\n")
	}
	root := r.namedPath()
	for _, e := range p.Env {
		name, value, _ := strings.Cut(e, "=")
		w.WriteString(name + "=" + shellQuote(strings.ReplaceAll(value, "{root}", root)) + "\nexport " + name + "\n")
	}
	w.WriteString("exec " + shellQuote(exec) + " \"$@\"\n")
	return w.String()
}

// bins returns the commands of the package name@version of kind that bin/ holds, of its
// bin entries: all of them, but for an npm instance not asked for, none (npm -g links the
// commands of the packages it installs, not of their dependencies, which may hold several
// versions of one command).
func (r *Root) bins(kind, name, version string, bin []repo.Command) []repo.Command {
	if kind != repo.KindNPM || len(bin) == 0 {
		return bin
	}
	if asked := r.askedFor(); asked[repo.InstanceKey(kind, name, version)] || asked[name] {
		return bin
	}
	return nil
}

// askedFor returns the npm instances asked for, by key, and the names requested of this
// change (Request), which bins links the commands of, but those it no longer asks for
// (Unrequest); read once.
func (r *Root) askedFor() map[string]bool {
	if r.asked == nil {
		r.asked = make(map[string]bool)
		reqs, _ := r.db.Requested() // unread, none asked for: no command is linked
		for k := range reqs {
			r.asked[k] = true
		}
		for _, q := range r.requests {
			r.asked[q.Name] = true
		}
		for k := range r.requestsAt {
			r.asked[k] = true
		}
		r.unask(r.asked)
	}
	return r.asked
}

// wrapperPaths returns the bin/CMD paths whose member a wrapper script takes the place of
// (binWant), by the package whose member and command it is, for the packages of all.
func (r *Root) wrapperPaths(all map[string]*db.Record) map[string]string {
	libs := newLibIndex(all)
	holds, _ := r.holders(all, nil) // nothing incoming: no clash
	paths := make(map[string]string)
	for _, p := range all {
		for _, b := range p.Bin {
			if at := cmdPath(p, b); at == "bin/"+b.Name && holds[b.Name] == p.Key() && (!libs.none(p) || len(p.Env) > 0) {
				paths[at] = p.Key()
			}
		}
	}
	return paths
}

// namedPath is where elem is under the root, by the path the root is known by
// (Options.Name).
func (r *Root) namedPath(elem ...string) string {
	if r.o.Name == "" {
		return r.path(elem...)
	}
	return filepath.Join(append([]string{r.o.Name}, elem...)...)
}

// libDirs returns the library directories of p and of the packages of libs it depends on,
// directly or not: p's first, then each dependency's, depth first in the order of the
// depends lists, each package once, as absolute paths in the prefix.
func (r *Root) libDirs(libs *libIndex, p *db.Record) []string {
	var dirs []string
	seen, had := make(map[string]bool), make(map[string]bool) // packages walked, directories listed
	var walk func(q *db.Record)
	walk = func(q *db.Record) {
		seen[q.Key()] = true
		for _, l := range q.Lib {
			if d := r.namedPath(prefixPath(path.Clean(l), q.Into)); !had[d] {
				had[d] = true
				dirs = append(dirs, d)
			}
		}
		for _, d := range libs.deps(q) {
			if !seen[d.Key()] && !libs.none(d) {
				walk(d)
			}
		}
	}
	if !libs.none(p) {
		walk(p)
	}
	return dirs
}

// libIndex holds the packages a root holds, by name, for libDirs, remembering those that
// use no library directory, directly or not: the commands of a chain of n packages cost n
// steps, not n² (a 100,000-deep chain, #30).
type libIndex struct {
	all           *meets
	with, without map[string]bool // using library directories, directly or not, or none
}

func newLibIndex(all map[string]*db.Record) *libIndex {
	return &libIndex{all: newMeets(all), with: make(map[string]bool), without: make(map[string]bool)}
}

// deps returns the packages of l that meet p's depends (meets.by), in the order of its
// depends list.
func (l *libIndex) deps(p *db.Record) []*db.Record {
	var ds []*db.Record
	for _, d := range p.Depends {
		if q := l.all.by(d); q != nil {
			ds = append(ds, q)
		}
	}
	return ds
}

// none reports whether neither p nor any package it depends on, directly or not, declares
// library directories.
func (l *libIndex) none(p *db.Record) bool {
	busy := make(map[string]bool)
	var walk func(q *db.Record) (none, sure bool)
	walk = func(q *db.Record) (none, sure bool) {
		switch {
		case l.without[q.Key()]:
			return true, true
		case l.with[q.Key()]:
			return false, true
		}
		if busy[q.Key()] { // a cycle: the answer is its first member's
			return true, false
		}
		if len(q.Lib) > 0 {
			l.with[q.Key()] = true
			return false, true
		}
		busy[q.Key()] = true
		sure = true
		for _, d := range l.deps(q) {
			n, s := walk(d)
			if !n {
				l.with[q.Key()] = true
				return false, true
			}
			sure = sure && s
		}
		if sure {
			l.without[q.Key()] = true
		}
		return true, sure
	}
	none, _ := walk(p)
	return none
}

// named indexes packages by key (db.Record.Key): a name, or an npm instance's NAME@VERSION.
func named(pkgs []db.Record) map[string]*db.Record {
	all := make(map[string]*db.Record, len(pkgs))
	for i := range pkgs {
		all[pkgs[i].Key()] = &pkgs[i]
	}
	return all
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ours reports whether got, what readBin found in bin/, is pkg's: a symlink up out of
// bin/ (into the prefix, or into pkgs/ as roots made before the prefix have them), or a
// wrapper script.
func ours(got string) bool {
	return strings.HasPrefix(got, "../") || strings.HasPrefix(got, wrapperHead)
}

// ourBin reports whether the bin/ entry name is pkg's (ours).
func (r *Root) ourBin(name string) bool {
	t, err := r.readBin(name)
	return err == nil && ours(t)
}

// readBin returns what the bin/ entry name holds: a symlink's target, or the script of a
// wrapper of pkg's. For anything else it returns readlink's error (EINVAL for a file).
func (r *Root) readBin(name string) (string, error) {
	if r.fd[bin] < 0 { // a read-only root without bin/
		return "", &os.PathError{Op: "readlink", Path: r.path("bin", name), Err: unix.ENOENT}
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(r.fd[bin], name, buf)
	if err == nil {
		return string(buf[:n]), nil
	}
	err = &os.PathError{Op: "readlink", Path: r.path("bin", name), Err: err}
	if !errors.Is(err, syscall.EINVAL) {
		return "", err
	}
	b, rerr := r.readSmall(place{bin, name}, maxWrapper)
	if rerr != nil || !bytes.HasPrefix(b, []byte(wrapperHead)) {
		return "", err
	}
	return string(b), nil
}

// makeBin creates the bin/ entry name as want, what binWant returned.
func (r *Root) makeBin(name, want string) error {
	if !strings.HasPrefix(want, wrapperHead) {
		if err := unix.Symlinkat(want, r.fd[bin], name); err != nil {
			return &os.LinkError{Op: "symlink", Old: want, New: r.path("bin", name), Err: err}
		}
		return nil
	}
	fd, err := unix.Openat(r.fd[bin], name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o755)
	if err != nil {
		return &os.PathError{Op: "open", Path: r.path("bin", name), Err: err}
	}
	f := os.NewFile(uintptr(fd), r.path("bin", name))
	_, err = io.WriteString(f, want)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(r.fd[bin], name, 0)
	}
	return err
}

// checkBins refuses p when one of its commands is a file pkg does not manage, and returns
// the commands of p that are symlinks changed by hand: the installed version of p declares
// them, and committing p points them back (ownLinks). A file of the user's in the place of
// a command is never replaced. Whether another package provides a command is checked at
// commit (checkApply), which knows what else the commit installs and removes.
func (r *Root) checkBins(p repo.Package) (own []string, err error) {
	bins := r.bins(p.Kind, p.Name, p.Version, p.Bin)
	if len(bins) == 0 {
		return nil, nil
	}
	keys := make([]string, len(bins))
	for i, b := range bins {
		keys[i] = "bin/" + b.Name
	}
	owners, err := r.db.Owners(keys) // a package's member there: the commit's conflict check decides
	if err != nil {
		return nil, err
	}
	for _, b := range bins {
		cmd := b.Name
		where := r.path("bin", cmd)
		if _, member := owners["bin/"+cmd]; member {
			continue
		}
		t, err := r.readBin(cmd)
		switch {
		case errors.Is(err, os.ErrNotExist) || err == nil && ours(t):
		case err == nil:
			declared, err := r.declares(p, cmd)
			if err != nil {
				return nil, err
			}
			if !declared {
				return nil, &unmanagedError{Path: where, Command: true}
			}
			own = append(own, cmd)
		default:
			return nil, &unmanagedError{Path: where, Command: true}
		}
	}
	return own, nil
}

// declares reports whether the installed version of p, if any, declares the command cmd.
// checkBins asks only about a command's symlink that is not pkg's: most installs have
// none, and a read of p's record for each would cost a transaction each.
func (r *Root) declares(p repo.Package, cmd string) (bool, error) {
	rec, err := r.db.Get(p.Key())
	if errors.Is(err, db.ErrNotInstalled) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(rec.Bin, func(b repo.Command) bool { return b.Name == cmd }), nil
}

// ownLinks points back the commands of the staged packages that checkBins found changed by
// hand, if each is still a symlink that is not pkg's.
func (r *Root) ownLinks(staged []*Staged) error {
	for _, s := range staged {
		for _, b := range s.rec.Bin {
			cmd := b.Name
			if _, ok := s.wants[cmd]; !ok || !slices.Contains(s.own, cmd) {
				continue
			}
			if t, err := r.readBin(cmd); err != nil || ours(t) {
				continue // gone, a file now, or pkg's: syncBins' part
			}
			if err := r.link(cmd, s.wants[cmd]); err != nil {
				return err
			}
		}
	}
	return nil
}

// An UnlinkedError is a command of an installed package that something else took the
// place of; reinstalling the package links it again.
type UnlinkedError struct {
	Path    string // the command's link in bin/
	Package string
}

func (e *UnlinkedError) Error() string {
	return fmt.Sprintf("command %s of %s is not linked: something else is in its place", e.Path, e.Package)
}

// checkLinked returns an error for each command of the staged packages that does not
// point at them: a file put in its place since checkBins looked.
func (r *Root) checkLinked(staged []*Staged) error {
	var errs []error
	for _, s := range staged {
		for _, b := range s.rec.Bin {
			cmd := b.Name
			w, ok := s.wants[cmd]
			if !ok {
				continue // its member is the command (binWant)
			}
			if t, err := r.readBin(cmd); err != nil || t != w {
				errs = append(errs, &UnlinkedError{Path: r.path("bin", cmd), Package: s.rec.Name})
			}
		}
	}
	return errors.Join(errs...)
}

// LinksError is returned when a change was committed, or an interrupted one completed,
// but bin/ could not be made to agree with it: the packages are as recorded, and some
// command link is missing, stale or dangling until a later command can fix bin/. With
// Prefix, it is the roll-forward of the links of the packages' files in the root itself
// that stopped: the change is recorded all the same, and the next Open finishes it.
type LinksError struct {
	Dir    string // the root's bin directory; with Prefix, the root
	Prefix bool
	Err    error
}

func (e *LinksError) Error() string {
	if e.Prefix {
		return fmt.Sprintf("the last change is recorded, but the links of its files in %s are not all in place yet: %v", e.Dir, e.Err)
	}
	return fmt.Sprintf("could not update the command links in %s: %v", e.Dir, e.Err)
}

func (e *LinksError) Unwrap() error { return e.Err }

// syncBins makes <root>/bin hold the links the database's packages declare: links into
// pkgs/ that no package declares are removed, and with create, or when a link is being
// prepared (a commit cut short), the missing or different ones are made; other files are
// left alone. Otherwise a link a package declares is left as it is, missing or not, for
// verify to report.
func (r *Root) syncBins(create bool) error {
	want, pkgs, err := r.wantBins()
	if err != nil {
		return err
	}
	ents, err := r.names(place{in: bin})
	if err != nil {
		return err
	}
	slices.Sort(ents)
	create = create || slices.ContainsFunc(ents, pendingLink)
	keys := make([]string, len(ents))
	for i, name := range ents {
		keys[i] = "bin/" + name
	}
	members, err := r.db.Owners(keys)
	if err != nil {
		return err
	}
	var pending []string
	for _, name := range ents {
		t, err := r.readBin(name)
		w, declared := want[name]
		if o, member := members["bin/"+name]; member {
			// A package's member in the prefix: replaced only by the wrapper of its own
			// command (binWant), which the roll-forward leaves to this; and put back where
			// the command needs the wrapper no more (its dependencies' libraries gone).
			// The wrapper is its top owner's (a package replacing it has its file there).
			var top *db.Record
			if len(o.Names) > 0 {
				top = pkgs[o.Names[0]]
			}
			wrapped := declared && strings.HasPrefix(w, wrapperHead) && commandAt(top, name) != nil
			if !wrapped && create && err == nil && strings.HasPrefix(t, wrapperHead) {
				if err := r.unwrap(name, top); err != nil {
					return err
				}
			}
			if !wrapped || err == nil && t == w {
				delete(want, name)
			}
			continue
		}
		if err != nil || !ours(t) || w == t || declared && !create {
			delete(want, name)
			continue
		}
		if pendingLink(name) {
			pending = append(pending, name) // from prepareLinks: link renames it, or it goes below
			continue
		}
		if err := unix.Unlinkat(r.fd[bin], name, 0); err != nil {
			return &os.PathError{Op: "remove", Path: r.path("bin", name), Err: err}
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
		if err := r.remove(place{bin, name}); err != nil {
			return err
		}
	}
	return nil
}

// wantBins returns what bin/ holds for every installed package's commands (binWants), and
// the installed packages by name.
func (r *Root) wantBins() (map[string]string, map[string]*db.Record, error) {
	all, err := r.db.List()
	if err != nil {
		return nil, nil, err
	}
	pkgs := named(all)
	libs := newLibIndex(pkgs)
	holds, _ := r.holders(pkgs, nil) // nothing incoming: no clash
	want := make(map[string]string)
	for _, p := range pkgs {
		maps.Copy(want, r.binWants(libs, holds, p))
	}
	return want, pkgs, nil
}

// commandAt returns p's command cmd where its prefix path is bin/cmd itself, or nil.
func commandAt(p *db.Record, cmd string) *repo.Command {
	if p == nil {
		return nil
	}
	for i, b := range p.Bin {
		if b.Name == cmd && cmdPath(p, b) == "bin/"+cmd {
			return &p.Bin[i]
		}
	}
	return nil
}

// unwrap links the member of p, the top owner of bin/cmd, back in the place a wrapper of
// pkg's holds, through a temporary name in .pkg/staging, which a start empties.
func (r *Root) unwrap(cmd string, p *db.Record) error {
	if p == nil {
		return nil
	}
	member := "bin/" + cmd
	if b := commandAt(p, cmd); b != nil {
		member = path.Clean(b.Path)
	} else if p.Into != "" {
		return nil // not found cheaply: verify says so
	}
	member = repo.FileName(p.Key()) + "/" + member
	return inParent(r.fd[pkgs], member, func(fd int, base string) error {
		const tmp = ".unwrap"
		st := r.fd[staging]
		unix.Unlinkat(st, tmp, 0)
		if err := unix.Linkat(fd, base, st, tmp, 0); err != nil {
			return &os.LinkError{Op: "link", Old: r.path("pkgs", member), New: r.path(".pkg", "staging", tmp), Err: err}
		}
		defer unix.Unlinkat(st, tmp, 0) // still there where bin/cmd was that inode already
		if err := unix.Renameat(st, tmp, r.fd[bin], cmd); err != nil {
			return &os.LinkError{Op: "rename", Old: r.path(".pkg", "staging", tmp), New: r.path("bin", cmd), Err: err}
		}
		return nil
	})
}

// prepareLinks sets s.wants, what bin/ holds for s's commands once the root holds all,
// and creates those that are missing or differ under their temporary names, before s is
// committed: once its record is written only renames remain, and a full filesystem can no
// longer fail an install that has committed.
func (r *Root) prepareLinks(libs *libIndex, holds map[string]string, s *Staged) (made []string, err error) {
	s.wants = r.binWants(libs, holds, s.rec)
	for _, b := range s.rec.Bin {
		cmd := b.Name
		target, ok := s.wants[cmd]
		if !ok {
			continue // its member is the command (binWant)
		}
		if t, err := r.readBin(cmd); err == nil && t == target {
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

// pending makes <root>/bin/.cmd.new target, a link's or a wrapper's (binWant), unless it
// is that already, and reports whether it made one. It replaces only an entry of pkg's.
func (r *Root) pending(cmd, target string) (bool, error) {
	tmp := pendingName(cmd)
	t, err := r.readBin(tmp)
	switch {
	case err == nil && t == target:
		return false, nil
	case err == nil && ours(t):
		if err := unix.Unlinkat(r.fd[bin], tmp, 0); err != nil {
			return false, &os.PathError{Op: "remove", Path: r.path("bin", tmp), Err: err}
		}
	case errors.Is(err, syscall.ENAMETOOLONG):
		return false, err // the name cannot be made, not something in the way
	case !errors.Is(err, os.ErrNotExist):
		return false, fmt.Errorf("%s is in the way of command %s: remove or rename it, then try again", r.path("bin", tmp), cmd)
	}
	return true, r.makeBin(tmp, target)
}

// prepared is what a commit prepared in bin/ (bin/.CMD.new): the commands of each staged
// package (prepareLinks), and the links, by command, of the packages it does not stage
// (prepareOthers).
type prepared struct {
	staged [][]string
	others map[string]string
}

// prepareOthers prepares the links of the packages of next, the root after the change,
// that it does not stage (incoming) but whose bin/ entries it changes: those that take a
// command over (holds, against held before it), as a removal or an upgrade of a command's
// holder gives the command back to the package it replaced, and those that depend,
// directly or not, before the change or after it, on a package it stages or removes
// (changed), whose library directories name their wrappers. The sync of bin/ at the
// commit's end renames them into place; a start after a cut finds them prepared, and so
// syncs bin/ in full, where it would leave a declared entry as it is.
func (r *Root) prepareOthers(libs *libIndex, held, holds map[string]string, installed, next map[string]*db.Record, incoming, changed map[string]bool) (map[string]string, error) {
	touched := dependents(libs.all, changed)
	maps.Copy(touched, dependents(newMeets(installed), changed))
	for cmd, k := range holds {
		if k != held[cmd] {
			touched[k] = true
		}
	}
	made := make(map[string]string)
	for _, k := range slices.Sorted(maps.Keys(touched)) {
		p := next[k]
		if p == nil || incoming[k] {
			continue
		}
		wants := r.binWants(libs, holds, p)
		held := make(map[string]string) // what bin/ holds, by command, read once
		for _, b := range r.bins(p.Kind, p.Name, p.Version, p.Bin) {
			if _, ok := wants[b.Name]; ok || holds[b.Name] != k {
				continue
			}
			// Its member is the command, and a wrapper there goes back to it, which only
			// a sync of bin/ in full does (unwrap): a marker link (to the member's place)
			// tells a start after a cut to make one. The sync removes it.
			if t, err := r.readBin(b.Name); err == nil && strings.HasPrefix(t, wrapperHead) {
				wants[b.Name], held[b.Name] = binTarget(cmdPath(p, b)), t
			}
		}
		for _, cmd := range slices.Sorted(maps.Keys(wants)) {
			target := wants[cmd]
			t, ok := held[cmd]
			if !ok {
				var err error
				if t, err = r.readBin(cmd); err != nil {
					t = ""
				}
			}
			if t == target {
				continue
			}
			ok, err := r.pending(cmd, target)
			if ok {
				made[cmd] = target
			}
			if err != nil {
				return made, fmt.Errorf("command %s of %s %s: %w", cmd, p.Name, p.Version, err)
			}
		}
	}
	return made, nil
}

// dependents returns the keys of the packages of m that depend, directly or not, on a
// package of keys (meets.by), each found once: O(packages and their depends).
func dependents(m *meets, keys map[string]bool) map[string]bool {
	users := make(map[string][]string) // by key, the packages depending on it directly
	for k, p := range m.next {
		for _, d := range p.Depends {
			if q := m.by(d); q != nil {
				users[q.Key()] = append(users[q.Key()], k)
			}
		}
	}
	return reach(users, make(map[string]bool), slices.Collect(maps.Keys(keys))...)
}

// reach adds to found the keys that next leads to from the keys from, directly or not, and
// returns found: a key already in found is not walked again.
func reach(next map[string][]string, found map[string]bool, from ...string) map[string]bool {
	todo := slices.Clone(from)
	for len(todo) > 0 {
		k := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, d := range next[k] {
			if !found[d] {
				found[d] = true
				todo = append(todo, d)
			}
		}
	}
	return found
}

// dropPending removes the links a failed commit prepared (made), where each is still the
// one prepared.
func (r *Root) dropPending(staged []*Staged, made *prepared) {
	for i, cmds := range made.staged {
		for _, b := range staged[i].rec.Bin {
			cmd := b.Name
			tmp := pendingName(cmd)
			if t, err := r.readBin(tmp); err == nil && t == staged[i].wants[cmd] && slices.Contains(cmds, cmd) {
				unix.Unlinkat(r.fd[bin], tmp, 0)
			}
		}
	}
	for cmd, target := range made.others {
		tmp := pendingName(cmd)
		if t, err := r.readBin(tmp); err == nil && t == target {
			unix.Unlinkat(r.fd[bin], tmp, 0)
		}
	}
}

// pendingName is the bin/ name of the link to cmd being prepared.
func pendingName(cmd string) string { return "." + cmd + ".new" }

// pendingLink reports whether the bin/ entry name is a link being prepared (".cmd.new").
func pendingLink(name string) bool {
	return len(name) > len("..new") && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".new")
}

// link makes <root>/bin/cmd target (binWant), replacing what is there by rename.
func (r *Root) link(cmd, target string) error {
	if _, err := r.pending(cmd, target); err != nil {
		return err
	}
	tmp := pendingName(cmd)
	if err := unix.Renameat(r.fd[bin], tmp, r.fd[bin], cmd); err != nil {
		return &os.LinkError{Op: "rename", Old: r.path("bin", tmp), New: r.path("bin", cmd), Err: err}
	}
	return nil
}
