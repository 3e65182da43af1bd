package install

import (
	"archive/tar"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/fiemap"
	"pkg/repo"
	"pkg/tarutil"
)

// What Verify finds. A FileError's Err is one of ErrModified, ErrMissing, ErrExtra and
// ErrUnreadable, and matches (errors.Is) what more is known: for a modified file, each of
// ErrType, ErrMode, ErrSize, ErrContent and ErrLinkTarget that differs; for a command's
// link in bin/, ErrCommandLink, and ErrForeign too where a file not pkg's holds its place;
// for a package directory that is gone, ErrPackageDir; for the placeholder in it of a
// folded directory, ErrPlaceholder; for a path of the root's prefix,
// ErrPrefix; for a file this process may not read, fs.ErrPermission; for a dependency
// nothing installed meets, ErrDependency (missing). A package recorded without its entry
// (db.Record.Bare) is ErrIncomplete, naming no path. A file whose data differ from its
// digest while still on the cache tar's blocks is ErrCacheDamaged (VerifyFull).
var (
	ErrModified   = errors.New("install: modified")
	ErrMissing    = errors.New("install: missing")
	ErrExtra      = errors.New("install: not recorded")
	ErrUnreadable = errors.New("install: unreadable")
	// ErrIncomplete is a package a repair recorded from its tree alone (db.Record.Bare):
	// its files are checked, its dependencies and commands cannot be.
	ErrIncomplete = errors.New("install: recorded without its dependencies, commands and libraries")
	// ErrCacheDamaged is a file whose data alone differ from its digest, and that holds
	// what the cache's tar holds of its member, on the tar's own blocks: not changed in the
	// root, but cloned from an entry whose bytes were wrong (FileError.Entry names it). A
	// reinstall that checks the entry whole fetches it again. One whose mode or type
	// differs too was changed in the root: ErrModified.
	ErrCacheDamaged = errors.New("install: damaged in the cache")

	ErrType        = errors.New("install: type differs")
	ErrMode        = errors.New("install: mode differs")
	ErrSize        = errors.New("install: size differs")
	ErrContent     = errors.New("install: content differs")
	ErrLinkTarget  = errors.New("install: symlink target differs")
	ErrCommandLink = errors.New("install: command link")
	// ErrForeign is a command's place in bin/ held by a file that is not a symlink:
	// reinstalling does not replace it (not pkg's to remove), so it must go first.
	ErrForeign    = errors.New("install: a file not pkg's in a command's place")
	ErrPackageDir = errors.New("install: package directory")
	// ErrPlaceholder is the empty directory a package's tree holds in place of a directory
	// folded into the prefix.
	ErrPlaceholder = errors.New("install: placeholder of a folded directory")
	// ErrPrefix is a path of the root's prefix that does not hold the package's file (its
	// inode in pkgs/), or its directory.
	ErrPrefix = errors.New("install: in the root's prefix")
)

// A FileError is one way an installed package differs from its record.
type FileError struct {
	Package, Version string
	Kind             string // the package's (repo.KindNPM: one of several versions of its name, by repo.InstanceKey)
	Path             string // relative to the package directory; absolute for a command link, a path of the prefix, or the package directory itself; "" for a dependency (ErrDependency) or the whole package (ErrIncomplete)
	Requirement      string // for a dependency nothing installed meets (ErrDependency), the requirement, as "lib>=1"
	Entry            string // for a file cloned from a damaged cache entry (ErrCacheDamaged), the sha256 of that entry's archive
	Err              error
}

func (e FileError) Error() string {
	if e.Path == "" && e.Requirement == "" { // of the whole package: ErrIncomplete
		return fmt.Sprintf("%s %s: %v", e.Package, e.Version, e.Err)
	}
	return fmt.Sprintf("%s %s: %s: %v", e.Package, e.Version, cmp.Or(e.Path, e.Requirement), e.Err)
}

func (e FileError) Unwrap() error { return e.Err }

// finding is a FileError's Err: its kind (ErrModified...), then what more is known. A
// pointer, so that a FileError stays comparable.
type finding struct{ errs []error }

// found returns the Err of a FileError of kind and more.
func found(kind error, more ...error) error { return &finding{append([]error{kind}, more...)} }

func (f *finding) Error() string {
	if len(f.errs) == 1 {
		return f.errs[0].Error()
	}
	s := make([]string, len(f.errs)-1)
	for i, e := range f.errs[1:] {
		s[i] = e.Error()
	}
	return f.errs[0].Error() + " (" + strings.Join(s, ", ") + ")"
}

// Unwrap returns the kind and what more is known, built once: errors.Is calls it for
// each sentinel report matches.
func (f *finding) Unwrap() []error { return f.errs }

const verifyChunk = 256 // files of one directory checked by one job

// ErrNotLinked is returned by Verify for a root whose last change is recorded and its
// roll-forward not yet run (read without the lock: a command is changing the root, or
// was cut short), which the next Open runs. One that Open or Apply ran and could not
// finish is returned as their *LinksError, with its cause.
var ErrNotLinked = errors.New("install: the last change's links still to make")

// Verify compares the installed files of the named packages, or of every installed package
// when names is empty, with what the database records: type, mode, size, the sha256 of file
// data and of symlink targets, and the command links in bin/; and their dependencies with
// the installed packages (a package deleted by hand, or not recorded again by a repair).
// It reports each difference, each missing and each extra file, each dependency nothing
// installed meets, sorted by package and path. While the last change's
// links into the prefix are not all made, it checks nothing and returns why (ErrNotLinked
// or a *LinksError): every path they lack would be missing. Files are checked on several
// goroutines, each directory relative to a descriptor that no symlink led to. What this
// process may not read (a package's own modes, or another user's root) is checked by its
// metadata instead: its type and mode as recorded and no change since the install (ctime),
// as its data and entries cannot have changed without that; else it is "unreadable".
func (r *Root) Verify(names ...string) ([]FileError, error) { return r.VerifyWith(nil, names...) }

// Cache gives VerifyWith the aligned tars packages were installed from (fetch.Cache).
type Cache interface {
	Path(sha256 string) string                       // where the tar of the archive with this sha256 is
	Members(sha256 string) ([]tarutil.Member, error) // its members, with data offsets and digests
}

// VerifyWith is Verify, reading from the files whose data install cloned only what they do
// not share with the cache's tar: a write to a shared block moves it elsewhere (copy on
// write), so a file whose byte at L is still on the block of the tar's byte at its member's
// offset plus L holds what the tar holds there. The bytes not so shared, as a tail written
// by install, are compared with the tar's. Every other file, and any whose map differs
// (defragmented, deduplicated, copied), is hashed; so are all files when cache is nil, or
// lacks a package's archive, or the filesystem cannot report extents (FIEMAP). Shared
// blocks are not read: damage beneath the filesystem shows only by hashing (cache nil).
func (r *Root) VerifyWith(cache Cache, names ...string) ([]FileError, error) {
	problems, _, err := r.verify(cache, false, names)
	return problems, err
}

// VerifyFull is Verify, hashing every file, and telling by cache which of those that differ
// from their digest hold the very blocks of the cache's tar they were cloned from: not
// changed in the root, as a write moves a shared block (copy on write), but cloned from
// bytes damaged in the cache (ErrCacheDamaged), which its check at use samples and does
// not read whole. cache may be nil.
func (r *Root) VerifyFull(cache Cache, names ...string) ([]FileError, error) {
	problems, _, err := r.verify(cache, true, names)
	return problems, err
}

// verify is VerifyWith, or VerifyFull where full, also returning how many bytes it found
// shared with the cache and did not read.
func (r *Root) verify(cache Cache, full bool, names []string) ([]FileError, int64, error) {
	if err := r.linksPending(); err != nil {
		return nil, 0, err
	}
	pkgs, files, err := r.db.Installed(names...) // one transaction: one state, without the lock too
	if err != nil {
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	all, err := r.db.List()
	if err != nil {
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	v := &verifier{libs: newLibIndex(named(all)), cache: cache, full: full}
	v.holds, _ = r.holders(named(all), nil) // nothing incoming: no clash
	defer v.close()
	for i := range pkgs {
		if err := v.add(r, &pkgs[i], files[i]); err != nil {
			return nil, 0, err
		}
	}
	problems, err := v.run()
	if err != nil {
		return nil, 0, err
	}
	inPrefix, err := r.verifyPrefix(named(all), pkgs, files)
	if err != nil {
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	problems = append(problems, inPrefix...)
	links, err := r.verifyLinks(named(all), pkgs)
	if err != nil {
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	problems = append(problems, links...)
	problems = append(problems, unmet(pkgs, all)...)
	problems = append(problems, incomplete(pkgs)...)
	slices.SortStableFunc(problems, func(a, b FileError) int {
		if c := strings.Compare(a.Package, b.Package); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Requirement, b.Requirement))
	})
	return problems, v.unread.Load(), nil
}

// unmet returns a finding for each requirement of pkgs (required: their depends and an npm
// package's peers) that nothing of all, the installed packages, meets, as a change would
// be refused for leaving it so (checkApply).
func unmet(pkgs, all []db.Record) []FileError {
	var m *meets
	var out []FileError
	for i := range pkgs {
		p := &pkgs[i]
		for _, req := range required(p) {
			if m == nil {
				m = newMeets(named(all))
			}
			if !m.met(req) {
				out = append(out, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Requirement: req.String(), Err: found(ErrMissing, ErrDependency)})
			}
		}
	}
	return out
}

// incomplete returns a finding for each package of pkgs recorded without its entry.
func incomplete(pkgs []db.Record) []FileError {
	var out []FileError
	for _, p := range pkgs {
		if p.Bare {
			out = append(out, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Err: found(ErrIncomplete)})
		}
	}
	return out
}

// verifier checks the files of several packages, a directory or part of one per job.
type verifier struct {
	trees    []*verifyTree
	jobs     []verifyJob
	problems []FileError       // found before the jobs run
	libs     *libIndex         // every installed package, for the commands' libraries
	holds    map[string]string // command → the package whose command bin/ holds
	cache    Cache             // nil: hash every file
	full     bool              // hash every file, the cache telling its damage from a change (VerifyFull)
	unread   atomic.Int64      // bytes found shared with the cache
}

// verifyTree is one installed package, open for checking.
type verifyTree struct {
	pkg      *db.Record
	fd       int     // the package directory
	at       *treeAt // where its members are: fd, or the prefix for its folded directories
	files    []db.File
	recorded map[string]int // index in files by path
	src      *pendingTar    // the tar it was cloned from, being opened; nil if none

	mu         sync.Mutex
	unreadable map[string]bool // the closed directories reported
}

// verifyJob checks some of the files recorded in one directory, and first lists it (list),
// checking its mode and finding extra entries.
type verifyJob struct {
	tree     *verifyTree
	dir      string
	list     bool
	files    []int // indexes in tree.files
	later    []int // of files, those left for when the tree's tar is open (run)
	problems []FileError
}

func (v *verifier) add(r *Root, p *db.Record, files []db.File) error {
	v.problems = append(v.problems, checkBinLinks(r, p, v.libs, v.holds)...)
	fd, err := r.open(treeOf(p.Key()), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		what := found(ErrModified, ErrType)
		if errors.Is(err, unix.ENOENT) {
			what = found(ErrMissing, ErrPackageDir)
		} else if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
			return err
		}
		// Named whole, as a prefix path is: "." would not say which directory.
		v.problems = append(v.problems, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Path: r.pathOf(treeOf(p.Key())), Err: what})
		return nil
	}
	t := &verifyTree{pkg: p, fd: fd, at: r.treeAt(fd, p), files: files, recorded: make(map[string]int, len(files)), unreadable: map[string]bool{}}
	if v.cache != nil {
		t.src = startCachedTar(v.cache, p.SHA256)
	}
	v.trees = append(v.trees, t)
	holders, err := r.checkPlaceholders(fd, p)
	if err != nil {
		return err
	}
	v.problems = append(v.problems, holders...)
	byDir := map[string][]int{".": nil}
	dirs := []string{"."}
	for i, f := range files {
		t.recorded[f.Path] = i
		if f.Type == tar.TypeDir {
			dirs = append(dirs, f.Path)
			continue
		}
		dir := path.Dir(f.Path)
		byDir[dir] = append(byDir[dir], i)
	}
	for _, dir := range dirs { // a directory's listing and its first files open it once
		idx := byDir[dir]
		first := idx[:min(len(idx), verifyChunk)]
		v.jobs = append(v.jobs, verifyJob{tree: t, dir: dir, list: true, files: first})
		for chunk := range slices.Chunk(idx[len(first):], verifyChunk) {
			v.jobs = append(v.jobs, verifyJob{tree: t, dir: dir, files: chunk})
		}
	}
	return nil
}

// checkPlaceholders reports each placeholder of p's folded directories that its tree, open
// at fd, lacks or holds as something else than a directory: the tree's shape, by which a
// repair of the database knows it, and what an upgrade exchanges back.
func (r *Root) checkPlaceholders(fd int, p *db.Record) ([]FileError, error) {
	var problems []FileError
	for _, m := range p.Folded {
		var st unix.Stat_t
		what := found(ErrMissing, ErrPlaceholder)
		err := inParent(fd, m, func(dfd int, base string) error { return unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) })
		holder := place{pkgs, repo.FileName(p.Key()) + "/" + m}
		switch {
		case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
			extra, err := placeholderEntries(fd, m, r.pathOf(holder))
			if err != nil {
				return nil, err
			}
			for _, name := range extra {
				problems = append(problems, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Path: r.pathOf(holder) + "/" + name, Err: found(ErrExtra, ErrPlaceholder)})
			}
			continue
		case err == nil:
			what = found(ErrModified, ErrType, ErrPlaceholder)
		case errors.Is(err, unix.EACCES):
			// A directory on its way this process may not search: the walk of the tree
			// reports it where it differs from the record, as for any other member.
			continue
		case !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP):
			return nil, pathError("lstat", r.pathOf(holder), err)
		}
		// Named whole: the member's path names the folded directory, at its prefix path.
		problems = append(problems, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Path: r.pathOf(holder), Err: what})
	}
	return problems, nil
}

// placeholderEntries returns the names in the placeholder of the folded directory member
// in the tree open at fd (at abs): what is there is no package's, the member's files being
// at its prefix path. None where it may not be read, as for a directory on its way.
func placeholderEntries(fd int, member, abs string) ([]string, error) {
	dfd, err := openBeneath(fd, member, unix.O_RDONLY|unix.O_DIRECTORY)
	switch {
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOENT):
		return nil, nil
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: abs, Err: errors.Unwrap(err)}
	}
	f := os.NewFile(uintptr(dfd), abs)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// linksPending returns why the prefix may not hold what the records say: the *LinksError
// of the roll-forward Open or Apply could not finish, or ErrNotLinked for one recorded
// and not yet run; nil where the last one is done.
func (r *Root) linksPending() error {
	p, done, err := r.db.Prefix()
	switch {
	case err != nil || p == nil || done:
		return err
	case r.unlinked != nil:
		return r.unlinked
	}
	return &reasonError{fmt.Sprintf("the last change to %s is recorded, but the links of its files there are not all in place yet: the command changing it puts them there, or, where one was cut short, the next to take its lock", r.dir), ErrNotLinked, nil}
}

// verifyPrefix reports the paths of the packages recs, whose files are files, where the
// root's prefix does not hold what their records say: a directory, or the inode of the
// package's member in pkgs/ where the package is the path's top owner (one fstatat of each
// side per path). all is every installed package.
func (r *Root) verifyPrefix(all map[string]*db.Record, recs []db.Record, files [][]db.File) ([]FileError, error) {
	var problems []FileError
	wrappers := r.wrapperPaths(all)
	dst, src := r.prefixDirs(), newDirCache(r.fd[pkgs])
	defer dst.close()
	defer src.close()
	for i := range recs {
		p := &recs[i]
		folds := foldsOf(p)
		// What lies beneath the package's folded directories is its tree itself, verified
		// with it: left out before the entries are made, as a toolchain's are nearly all.
		es := prefixEntries(p.Into, len(files[i]), func(yield func(string, bool) bool) {
			for k := range files[i] {
				f := &files[i][k]
				at := prefixPath(f.Path, p.Into)
				if slices.ContainsFunc(folds, func(d string) bool { return within(at, d) && at != d }) {
					continue
				}
				if !yield(f.Path, f.Type == tar.TypeDir) {
					return
				}
			}
		})
		paths := make([]string, len(es))
		for j, e := range es {
			paths[j] = e.path
		}
		owners, err := r.db.Owners(paths)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			o := owners[e.path]
			if e.member == "" || len(o.Names) == 0 || o.Names[0] != p.Key() && !o.Dir || wrappers[e.path] == p.Key() || e.path == "bin" {
				continue // another's file on top, or pkg's own
			}
			var cur, want unix.Stat_t
			if !e.dir {
				sdir, sbase, err := src.parent(repo.FileName(p.Key()) + "/" + e.member)
				if err == nil {
					err = unix.Fstatat(sdir, sbase, &want, unix.AT_SYMLINK_NOFOLLOW)
				}
				if err != nil {
					continue // missing from pkgs/ (the tree's finding), or behind its own modes: not linked
				}
			}
			dir, base, err := dst.parent(e.path)
			if err == nil {
				err = unix.Fstatat(dir, base, &cur, unix.AT_SYMLINK_NOFOLLOW)
			}
			what := found(ErrModified, ErrPrefix)
			switch {
			case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
				what = found(ErrMissing, ErrPrefix)
			case err != nil:
				what = found(ErrUnreadable, ErrPrefix, err)
			case e.dir && cur.Mode&unix.S_IFMT == unix.S_IFDIR:
				if o.Names[0] != p.Key() || slices.Contains(folds, e.path) || !worldWritable(cur.Mode) {
					continue // the first owner reports a directory anyone may write in, once; a folded one is its tree's
				}
				what = found(ErrModified, ErrPrefix, ErrMode)
			case e.dir:
				what = found(ErrModified, ErrPrefix, ErrType)
			case cur.Ino == want.Ino && cur.Dev == want.Dev:
				continue
			}
			problems = append(problems, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Path: r.path(e.path), Err: what})
		}
	}
	return problems, nil
}

// checkBinLinks reports the commands of p whose links or wrappers in bin/ are not what
// install made, when the root holds the packages of libs, whose commands holds gives.
func checkBinLinks(r *Root, p *db.Record, libs *libIndex, holds map[string]string) []FileError {
	var problems []FileError
	wants := r.binWants(libs, holds, p)
	for _, b := range p.Bin {
		want, ok := wants[b.Name]
		if !ok {
			continue // its member is the command, verified with the prefix, or another package holds it
		}
		if k := "bin/" + b.Name; cmdPath(p, b) == k {
			if o, err := r.db.Owners([]string{k}); err == nil && len(o[k].Names) > 0 && o[k].Names[0] != p.Key() {
				continue // a package replacing it has its file there, in place of its wrapper too
			}
		}
		link := r.path("bin", b.Name)
		got, err := r.readBin(b.Name)
		what := found(ErrModified, ErrCommandLink)
		switch {
		case errors.Is(err, os.ErrNotExist):
			what = found(ErrMissing, ErrCommandLink)
		case err == nil && got == want:
			continue
		case errors.Is(err, syscall.EINVAL): // not a symlink
			what = found(ErrModified, ErrCommandLink, ErrForeign)
		}
		problems = append(problems, FileError{Package: p.Name, Version: p.Version, Kind: p.Kind, Path: link, Err: what})
	}
	return problems
}

func (v *verifier) close() {
	for _, t := range v.trees {
		unix.Close(t.fd)
		if t.src != nil {
			t.src.get().close()
		}
	}
}

// verifyWorkers is how many jobs run at once: enough to keep a disk's queue busy when the
// files are not cached, and every core hashing when they are.
func verifyWorkers() int { return min(max(runtime.GOMAXPROCS(0), 4), 16) }

// run runs every job and returns all problems. The files a job would check against a
// tar whose index is still being read are left for a second round, after every job: a
// worker does not wait for the index (a kernel tree's takes a second) while other files
// can be checked.
func (v *verifier) run() ([]FileError, error) {
	if err := v.runJobs(v.jobs, true); err != nil {
		return nil, err
	}
	var again []verifyJob
	for _, j := range v.jobs {
		if len(j.later) > 0 {
			again = append(again, verifyJob{tree: j.tree, dir: j.dir, files: j.later})
		}
	}
	if err := v.runJobs(again, false); err != nil {
		return nil, err
	}
	problems := v.problems
	for _, jobs := range [][]verifyJob{v.jobs, again} {
		for i := range jobs {
			problems = append(problems, jobs[i].problems...)
		}
	}
	return problems, nil
}

// runJobs runs jobs on verifyWorkers goroutines; early, they leave for later the files that
// would wait for a tar.
func (v *verifier) runJobs(jobs []verifyJob, early bool) error {
	var next atomic.Int64
	errs := make([]error, min(verifyWorkers(), len(jobs)))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			bp := copyBufs.Get().(*[]byte) // bytes read at once from a file being hashed
			defer copyBufs.Put(bp)
			c := &fileChecker{h: sha256.New(), buf: *bp, fm: new(fiemap.Map), unread: &v.unread, early: early, full: v.full}
			for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
				if errs[w] = c.run(&jobs[i]); errs[w] != nil {
					next.Store(int64(len(jobs)))
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// needsTar reports whether f of t is checked against the tar it was cloned from.
func needsTar(t *verifyTree, f *db.File) bool {
	return t.src != nil && (f.Type == tar.TypeLink || f.Size >= minShared)
}

// fileChecker runs jobs with its own hash and buffer.
type fileChecker struct {
	h      hash.Hash
	buf    []byte
	fm     *fiemap.Map
	ext    []extent      // of the file being checked
	unread *atomic.Int64 // bytes found shared with the cache
	early  bool          // leave the files that would wait for a tar (verifyJob.later)
	full   bool          // hash every file; the tar tells only whose damage a difference is
}

// add records a finding of kind at p; one of ErrCacheDamaged names the package's entry.
func (j *verifyJob) add(p string, kind error, more ...error) {
	fe := FileError{Package: j.tree.pkg.Name, Version: j.tree.pkg.Version, Kind: j.tree.pkg.Kind, Path: p, Err: found(kind, more...)}
	if kind == ErrCacheDamaged {
		fe.Entry = j.tree.pkg.SHA256
	}
	j.problems = append(j.problems, fe)
}

// run checks one job; its errors name the package.
func (c *fileChecker) run(j *verifyJob) error {
	if err := c.runJob(j); err != nil {
		return fmt.Errorf("verify %s %s: %w", j.tree.pkg.Name, j.tree.pkg.Version, err)
	}
	return nil
}

func (c *fileChecker) runJob(j *verifyJob) error {
	flags := unix.O_PATH | unix.O_DIRECTORY
	if j.list {
		flags = unix.O_RDONLY | unix.O_DIRECTORY
	}
	base, dir := j.tree.at.at(j.dir)
	fd, err := openBeneath(base, dir, flags)
	if errors.Is(err, unix.EACCES) && j.list && len(j.files) > 0 {
		// A directory this process may search and not read: its files are checked all the same.
		if err := c.closed(j); err != nil {
			return err
		}
		j.list = false
		return c.runJob(j)
	}
	if errors.Is(err, unix.EACCES) {
		return c.closed(j)
	}
	if err != nil {
		return c.unreachable(j, err)
	}
	defer unix.Close(fd)
	if j.list {
		if err := c.list(j, fd); err != nil {
			return err
		}
	}
	for _, i := range j.files {
		if c.early && needsTar(j.tree, &j.tree.files[i]) && !j.tree.src.ready() {
			j.later = append(j.later, i)
			continue
		}
		if err := c.check(j, fd, &j.tree.files[i]); errors.Is(err, errClosed) {
			return c.closed(j)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// errClosed is what check returns for a file in a directory it may not search.
var errClosed = errors.New("directory not searchable")

// closed handles a job that permissions keep out of its directory. The outermost directory
// on the way that keeps it out is reported unreadable, once, unless it is as installed:
// then nothing under it can have changed since, as no one could enter it without changing
// its mode, and nothing is reported. A listing of the directory itself checks its mode.
func (c *fileChecker) closed(j *verifyJob) error {
	dir, st, err := closedDir(j.tree.at.at(j.dir))
	if err != nil {
		return c.unreachable(j, err)
	}
	i, ok := j.tree.recorded[dir]
	if ok && unchanged(&j.tree.files[i], &st, j.tree.pkg) {
		return nil
	}
	if ok && j.list && dir == j.dir && st.Mode&0o7777 != uint32(j.tree.files[i].Mode) {
		j.add(dir, ErrModified, ErrMode)
	}
	j.tree.mu.Lock()
	first := !j.tree.unreadable[dir]
	if first {
		j.tree.unreadable[dir] = true
	}
	j.tree.mu.Unlock()
	if first {
		j.add(dir, ErrUnreadable, fs.ErrPermission)
	}
	return nil
}

// closedDir returns the outermost directory on the way to dir, beneath top, that this
// process may not search, or dir itself, and its status.
func closedDir(top int, dir string) (string, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, at := top, "."
	defer func() {
		if fd != top {
			unix.Close(fd)
		}
	}()
	if dir != "." {
		for _, elem := range strings.Split(dir, "/") {
			next, err := unix.Openat(fd, elem, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == unix.EACCES {
				break
			}
			if err != nil {
				return "", st, &os.PathError{Op: "openat", Path: dir, Err: err}
			}
			if fd != top {
				unix.Close(fd)
			}
			fd, at = next, path.Join(at, elem)
		}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return "", st, &os.PathError{Op: "fstat", Path: at, Err: err}
	}
	return at, st, nil
}

// unchanged reports whether st, of a file that cannot be read, is as f records it and had no
// change since p was installed: a write, a chmod or a new entry sets its ctime. The kernel
// stamps ctime from its coarse clock, so a change within a tick (at most 10 ms) of the
// commit can pass as none.
func unchanged(f *db.File, st *unix.Stat_t, p *db.Record) bool {
	return st.Mode&unix.S_IFMT == recordedType(f.Type) && (f.Type == tar.TypeLink || st.Mode&0o7777 == uint32(f.Mode)) &&
		st.Ctim.Nano() <= p.Installed.UnixNano()
}

// unreachable reports what a job could not open: its directory, when the job lists it, and
// every file the job checks as missing.
func (c *fileChecker) unreachable(j *verifyJob, err error) error {
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		return err
	}
	if j.list {
		// Is the directory itself something else, or is a directory above it gone?
		kind, more := ErrMissing, []error(nil)
		base, dir := j.tree.at.at(j.dir)
		if pfd, _, perr := openParent(base, dir); perr == nil {
			closeParent(base, pfd)
			if !errors.Is(err, unix.ENOENT) {
				kind, more = ErrModified, []error{ErrType}
			}
		}
		j.add(j.dir, kind, more...)
	}
	for _, i := range j.files {
		j.add(j.tree.files[i].Path, ErrMissing)
	}
	return nil
}

// list checks the mode of the directory open at fd and reports its unrecorded entries.
func (c *fileChecker) list(j *verifyJob, fd int) error {
	if j.dir != "." {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return &os.PathError{Op: "fstat", Path: j.dir, Err: err}
		}
		if st.Mode&0o7777 != uint32(j.tree.files[j.tree.recorded[j.dir]].Mode) {
			j.add(j.dir, ErrModified, ErrMode)
		}
	}
	var names []string
	for {
		n, err := unix.Getdents(fd, c.buf[:])
		if err != nil {
			return &os.PathError{Op: "getdents", Path: j.dir, Err: err}
		}
		if n == 0 {
			break
		}
		_, _, names = unix.ParseDirent(c.buf[:n], -1, names)
	}
	for _, name := range names {
		p := name
		if j.dir != "." {
			p = j.dir + "/" + name
		}
		if _, ok := j.tree.recorded[p]; !ok {
			j.add(p, ErrExtra)
		}
	}
	return nil
}

// check compares one file, in the directory open at dirfd, with its record.
func (c *fileChecker) check(j *verifyJob, dirfd int, f *db.File) error {
	base := path.Base(f.Path)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			j.add(f.Path, ErrMissing)
			return nil
		}
		if errors.Is(err, unix.EACCES) {
			return errClosed
		}
		return &os.PathError{Op: "lstat", Path: f.Path, Err: err}
	}
	var diffs []error
	var err error
	switch {
	case st.Mode&unix.S_IFMT != recordedType(f.Type):
		diffs = append(diffs, ErrType)
	case f.Type == tar.TypeSymlink:
		diffs, err = c.checkTarget(dirfd, base, f, diffs)
	default:
		var src *cachedTar
		if needsTar(j.tree, f) {
			src = j.tree.src.get()
		}
		diffs, err = c.checkFile(src, dirfd, base, f, &st, diffs)
	}
	closed := errors.Is(err, unix.EACCES) // its data
	if err != nil && !closed {
		return &os.PathError{Op: "verify", Path: f.Path, Err: err}
	}
	switch i := slices.Index(diffs, ErrCacheDamaged); {
	case i >= 0:
		j.add(f.Path, ErrCacheDamaged, slices.Delete(diffs, i, i+1)...)
	case len(diffs) > 0:
		j.add(f.Path, ErrModified, diffs...)
	}
	if closed && !unchanged(f, &st, j.tree.pkg) {
		j.add(f.Path, ErrUnreadable, fs.ErrPermission)
	}
	return nil
}

func recordedType(t byte) uint32 {
	switch t {
	case tar.TypeDir:
		return unix.S_IFDIR
	case tar.TypeSymlink:
		return unix.S_IFLNK
	}
	return unix.S_IFREG
}

// checkTarget compares a symlink's target with its recorded digest. Records written before
// targets were recorded carry none, and match any target.
func (c *fileChecker) checkTarget(dirfd int, base string, f *db.File, diffs []error) ([]error, error) {
	n, err := unix.Readlinkat(dirfd, base, c.buf[:])
	if err != nil {
		return nil, err
	}
	if f.SHA256 != [32]byte{} && sha256.Sum256(c.buf[:n]) != f.SHA256 {
		diffs = append(diffs, ErrLinkTarget)
	}
	return diffs, nil
}

// checkFile compares a regular file's mode, size and data with its record. A hardlink's
// record has its target's digest, and neither mode nor size. When the data cannot be
// read, it returns the differences found before with the error. src, when not nil, is the
// tar the file's data was cloned from; with c.full, data that alone differ and are the
// tar's are ErrCacheDamaged, among the differences for check to make the finding's kind.
func (c *fileChecker) checkFile(src *cachedTar, dirfd int, base string, f *db.File, st *unix.Stat_t, diffs []error) ([]error, error) {
	if f.Type != tar.TypeLink && st.Mode&0o7777 != uint32(f.Mode) {
		diffs = append(diffs, ErrMode)
	}
	if f.Type == tar.TypeReg && st.Size != f.Size {
		return append(diffs, ErrSize), nil
	}
	if f.SHA256 == [32]byte{} {
		return diffs, nil
	}
	fd, err := unix.Openat(dirfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return diffs, err
	}
	defer unix.Close(fd)
	if !c.full && c.sameAsCached(src, fd, f) {
		return diffs, nil
	}
	sum, err := c.hash(fd)
	if err != nil {
		return diffs, err
	}
	if sum != f.SHA256 {
		diffs = append(diffs, ErrContent)
		// A mode changed too was changed in the root, whatever the cache holds.
		if c.full && !slices.Contains(diffs, ErrMode) && c.sameAsCached(src, fd, f) {
			diffs = append(diffs, ErrCacheDamaged) // the kind, which check takes out
		}
	}
	return diffs, nil
}

// hash returns the sha256 of the regular file open at fd.
func (c *fileChecker) hash(fd int) ([32]byte, error) {
	var sum [32]byte
	c.h.Reset()
	for {
		n, err := unix.Read(fd, c.buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return sum, err
		}
		if n == 0 {
			break
		}
		c.h.Write(c.buf[:n])
	}
	c.h.Sum(sum[:0])
	return sum, nil
}
