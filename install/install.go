package install

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/durable"
	"pkg/internal/regfile"
	"pkg/repo"
	"pkg/tarutil"
)

// Result describes one install.
type Result struct {
	Name, Version string
	Previous      string        // version replaced by this install, "" if none
	Again         bool          // the version and archive installed are those installed before
	Files         int           // members that are not directories
	Bytes         int64         // bytes of regular files
	Cloned        int64         // bytes shared with the cache
	Copied        int64         // bytes written
	Method        Method        // how bulk data moved; "" when no file needed a bulk transfer
	Fallback      error         // why the method is not Clone, when it is not
	Elapsed       time.Duration // staging it, without the commit
	Commit        time.Duration // the commit it was part of, shared by every package in it
}

// Staged is a package built in a staging directory and not yet visible in the root.
type Staged struct {
	name    string // its tree's name in staging
	rec     *db.Record
	files   *db.FileList
	res     *Result
	own     []string          // its commands changed by hand, to point back at commit (checkBins)
	wants   map[string]string // what bin/ holds for each of its commands once committed (prepareLinks)
	keep    bool              // left to the next start: a failed commit may have made it the only copy of a tree
	gone    bool              // Discard removed what its staging name held
	whole   bool              // its writes were not tracked: the commit syncs the whole filesystem
	entries []prefixEntry     // its paths in the prefix
	ended   time.Time         // when its staging ended (forceLog)
}

// Result returns how s was staged: the Result Apply returns for it, once committed.
func (s *Staged) Result() *Result { return s.res }

// Stage builds p's tree in staging, where nothing sees it until Apply, from the aligned tar
// at tarPath and from its tails where a directory beside it, named as tarPath with .tails
// for .tar, keeps them (fetch.Cache). members describe the tar, with data offsets and
// digests, as tarutil.ReadIndex or Align give them (validated); the digests are recorded
// with the files.
// Several packages may be staged at once, from several goroutines. Once ctx is done, Stage
// stops between directories and removes what it built.
func (r *Root) Stage(ctx context.Context, tarPath string, p repo.Package, members []tarutil.Member) (*Staged, error) {
	s, err := r.stage(ctx, tarPath, p, members)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p.Name, p.Version, err)
	}
	return s, nil
}

// Discard removes staged trees: the new tree of an uncommitted package, the old tree of a
// committed upgrade. A tree it removed is not looked for again.
func (r *Root) Discard(staged ...*Staged) {
	for _, s := range staged {
		if !s.keep && !s.gone {
			s.gone = r.removeTree(place{staging, s.name}) == nil
		}
	}
}

func (r *Root) stage(ctx context.Context, tarPath string, p repo.Package, members []tarutil.Member) (_ *Staged, err error) {
	start := time.Now()
	// The whole list passes the member policy before anything is created, whoever made it.
	if err := tarutil.Validate(members); err != nil {
		return nil, err
	}
	// The cache's tar is named beneath its tars/ descriptor (fetch.Cache.Path): a symlink
	// or a FIFO another user of a shared cache put in its place is refused, not followed.
	src, info, err := regfile.OpenInfo(tarPath, unix.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if err := checkExtent(members, info.Size()); err != nil {
		return nil, err
	}
	res := summarize(p, members)
	own, err := r.check(p, res, members)
	if err != nil {
		return nil, err
	}
	if err := checkFolds(r.fd[staging], r.path(".pkg", "staging"), members); err != nil {
		return nil, err
	}
	if err := CheckReserved(p, members); err != nil {
		return nil, err
	}
	order := byName(members)
	members = executable(p.Bin, members, order)
	tree, dirfd, err := r.makeStaging(repo.FileName(p.Key()))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.removeTree(tree)
		}
	}()
	st := newStager(ctx, src, info.Size(), dirfd, r.pathOf(tree), r.umask)
	st.useTails(tarPath)
	// An npm package's members keep the time of their install, as npm, pnpm and bun leave
	// them in node_modules; other kinds keep their archive's (docs/archives.md).
	st.noTimes = p.Kind == repo.KindNPM
	st.sync = !r.o.NoSync
	if st.sync { // else nothing to write back for the commit
		st.durable = r.filesys()
	}
	defer st.close()
	if err := st.stage(members); err != nil {
		return nil, full(r.dir, err)
	}
	files, err := r.db.WriteFiles(fileRecords(members, order))
	if err != nil {
		return nil, err
	}
	// makeStaging made the top 0700, which keeps a tree being built private; an installed
	// one is as readable as any directory the umask allows. The workers have waited for
	// every file's write-back, or, in a tree they did not track (Staged.whole), the commit
	// syncs the whole filesystem: the commit's sync after the rename carries it (commitTrees).
	if err := unix.Fchmod(dirfd, uint32(0o755&^r.umask)); err != nil {
		return nil, &os.PathError{Op: "chmod", Path: r.pathOf(tree), Err: err}
	}
	res.Cloned, res.Copied, res.Method, res.Fallback = st.cloned.Load(), st.copied.Load(), st.method, st.fallback
	rec := &db.Record{Name: p.Name, Version: p.Version, Kind: p.Kind, SHA256: p.SHA256, Depends: p.Depends, Optional: p.Optional, Peers: p.Peers, Bin: p.Bin, Lib: p.Lib,
		Summary: p.Summary, Files: res.Files, Size: res.Bytes, Origin: p.Origin,
		Provides: p.Provides, Conflicts: p.Conflicts, Replaces: p.Replaces, Into: intoOf(&p), Env: p.Env, Bare: p.Bare}
	res.Elapsed = time.Since(start) // Apply sets Commit
	return &Staged{name: tree.name, rec: rec, files: files, res: res, own: own, whole: !st.tracked,
		entries: memberEntries(rec.Into, members, order), ended: time.Now()}, nil
}

// full names the root in an error of staging that says its filesystem ran out of space or
// quota, which otherwise names a member alone: where the cache is on another filesystem,
// that tells which of the two is full.
func full(dir string, err error) error {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return &os.PathError{Op: "stage in", Path: dir, Err: err}
	}
	return err
}

// fileRecords yields the database records of members, in order (byName), each hardlink
// with its target's digest and each symlink with its target's, so Verify can check them.
func fileRecords(members []tarutil.Member, order []int32) iter.Seq[db.File] {
	return func(yield func(db.File) bool) {
		for _, i := range order {
			m := &members[i]
			f := db.File{Path: m.Name, Type: m.Type, Mode: m.Mode, Size: m.Size}
			switch m.Type {
			case tar.TypeReg:
				f.SHA256 = m.SHA256
			case tar.TypeLink:
				if j, ok := lookup(members, order, m.Linkname); ok && members[j].Type == tar.TypeReg {
					f.SHA256 = members[j].SHA256
				}
			case tar.TypeSymlink:
				f.SHA256 = sha256.Sum256([]byte(m.Linkname))
			}
			if !yield(f) {
				return
			}
		}
	}
}

// checkExtent refuses members whose data lie past the end of a tar of size bytes: a cached
// tar truncated after its index was written.
func checkExtent(members []tarutil.Member, size int64) error {
	for i := range members {
		if m := &members[i]; m.Offset+m.Size > size {
			return memberError(m, fmt.Errorf("data past the end of the %d-byte cached tar", size))
		}
	}
	return nil
}

func summarize(p repo.Package, members []tarutil.Member) *Result {
	res := &Result{Name: p.Name, Version: p.Version}
	for _, m := range members {
		if m.Type != tar.TypeDir {
			res.Files++
		}
		res.Bytes += m.Size
	}
	return res
}

// check refuses a package whose contents disagree with its index entry, or whose commands
// are missing or taken by another package.
func (r *Root) check(p repo.Package, res *Result, members []tarutil.Member) (own []string, err error) {
	if err := p.CheckContents(res.Files, res.Bytes); err != nil {
		return nil, err
	}
	if err := checkBin(p.Bin, members); err != nil {
		return nil, err
	}
	if err := CheckLib(p.Lib, members); err != nil {
		return nil, err
	}
	if len(p.Lib) > 0 && strings.ContainsAny(r.dir, ":;") {
		return nil, libPathError(r.dir)
	}
	return r.checkBins(p)
}

// CheckLib refuses a package's lib entries unless each names a directory among its members.
func CheckLib(lib []string, members []tarutil.Member) error {
	for _, l := range lib {
		if !slices.ContainsFunc(members, func(m tarutil.Member) bool { return m.Type == tar.TypeDir && m.Name == l }) {
			return fmt.Errorf("lib %q is not a directory in the package", l)
		}
	}
	return nil
}

// LibDirs returns, in member order, the directories that hold shared libraries by their
// names: a file or symlink named lib*.so or lib*.so.* (as ld.so looks them up by soname).
func LibDirs(members []tarutil.Member) []string {
	var dirs []string
	for _, m := range members {
		base := path.Base(m.Name)
		if m.Type == tar.TypeDir || !strings.HasPrefix(base, "lib") || !strings.HasSuffix(base, ".so") && !strings.Contains(base, ".so.") {
			continue
		}
		if dir := path.Dir(m.Name); dir != "." && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// Reasons a bin entry is refused, inside a *binError.
var (
	errBinNotFile     = errors.New("install: bin entry not a file in the package")
	errBinMissing     = errors.New("install: bin entry leads to no member of the package")
	errBinLoop        = errors.New("install: bin entry leads through too many symlinks")
	errBinThroughLink = errors.New("install: bin entry's path passes through a symlink")
)

// maxHops is how many symlinks a bin entry may lead through: Linux's limit, path_resolution(7).
const maxHops = 40

// binError is a bin entry that names no file of the package, or leads to
// none through the package's links.
type binError struct {
	Bin  string // the entry, as the index gives it
	At   string // the member its links lead to, or "" for the entry's own file
	Link string // with errBinThroughLink, the symlink the entry's own path passes through
	Err  error  // errBinNotFile, errBinMissing, errBinLoop or errBinThroughLink
}

func (e *binError) Error() string {
	switch {
	case e.Err == errBinThroughLink && e.At != "":
		return fmt.Sprintf("bin %q passes through the symlink %s: a command's path may not; its file is %s", e.Bin, e.Link, e.At)
	case e.Err == errBinThroughLink:
		return fmt.Sprintf("bin %q passes through the symlink %s: a command's path may not", e.Bin, e.Link)
	case e.Err == errBinLoop:
		return fmt.Sprintf("bin %q: too many levels of symlinks", e.Bin)
	case e.At == "":
		return fmt.Sprintf("bin %q is not a file in the package", e.Bin)
	case e.Err == errBinMissing:
		return fmt.Sprintf("bin %q leads to %s, which is not in the package", e.Bin, e.At)
	}
	return fmt.Sprintf("bin %q leads to %s, which is not a file", e.Bin, e.At)
}

func (e *binError) Unwrap() error { return e.Err }

// checkBin refuses a package's bin entries unless each names a file, hardlink or symlink
// among its members.
func checkBin(bin []repo.Command, members []tarutil.Member) error {
	if len(bin) == 0 {
		return nil
	}
	types := make(map[string]byte, len(bin)) // of the bin entries' files only: members may be 2^20
	for _, b := range bin {
		types[path.Clean(b.Path)] = 0
	}
	for i := range members {
		if _, ok := types[members[i].Name]; ok {
			types[members[i].Name] = members[i].Type
		}
	}
	for _, b := range bin {
		if t := types[path.Clean(b.Path)]; t != tar.TypeReg && t != tar.TypeLink && t != tar.TypeSymlink {
			return &binError{Bin: b.String(), Err: errBinNotFile}
		}
	}
	return nil
}

// CheckRunnable refuses, for a publisher, bin entries that would install commands that
// cannot run: one that leads, through the package's symlinks and hardlinks, to a missing
// member or to something not a file. A symlink out of the package (/usr/bin/env) is taken
// as it is; so, for a package that depends on others (depends), is a relative symlink to
// a path it does not hold, which the root's merged prefix holds beside it once a
// dependency is installed (python3-minimal's usr/bin/python3 -> python3.11, which
// python3.11-minimal holds). Installs check only checkBin, so that packages published
// before still install.
func CheckRunnable(bin []repo.Command, members []tarutil.Member, depends bool) error {
	order := byName(members)
	for _, b := range bin {
		if _, err := binFile(b, members, order, depends); err != nil {
			return err
		}
	}
	return nil
}

// Absent returns the commands of bin whose path names no member of the package and passes
// through none of its symlinks: those an npm package's package.json may name and its
// tarball lack, which npm and pnpm install the package without.
func Absent(bin []repo.Command, members []tarutil.Member) []repo.Command {
	order := byName(members)
	var absent []repo.Command
	for _, b := range bin {
		_, err := binFile(b, members, order, false)
		if be := (*binError)(nil); errors.As(err, &be) && be.Err == errBinNotFile && be.At == "" && be.Link == "" {
			absent = append(absent, b)
		}
	}
	return absent
}

// byName returns the indexes of members sorted by name: 4 bytes a member, where a map by
// name took about 50 and a sorted copy 96.
func byName(members []tarutil.Member) []int32 {
	order := make([]int32, len(members))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(members[a].Name, members[b].Name) })
	return order
}

// lookup returns the index of the member named name, found through order (byName).
func lookup(members []tarutil.Member, order []int32, name string) (int, bool) {
	k, ok := slices.BinarySearchFunc(order, name, func(i int32, name string) int { return strings.Compare(members[i].Name, name) })
	if !ok {
		return -1, false
	}
	return int(order[k]), true
}

// binFile follows the bin entry b through the package's hardlinks and symlinks to the
// regular member its command runs, and returns that member's index, or -1 for a symlink
// out of the package: an absolute one, or, with outside, a relative one to a path the
// package does not hold (CheckRunnable).
func binFile(b repo.Command, members []tarutil.Member, order []int32, outside bool) (int, error) {
	name := path.Clean(b.Path)
	symlinked := false // the last hop was a symlink's
	for hops := 0; ; hops++ {
		i, ok := lookup(members, order, name)
		switch {
		case !ok && hops == 0:
			if link, real := throughLink(name, members, order); link != "" {
				return -1, &binError{Bin: b.String(), At: real, Link: link, Err: errBinThroughLink}
			}
			return -1, &binError{Bin: b.String(), Err: errBinNotFile}
		case !ok && outside && symlinked:
			return -1, nil
		case !ok:
			return -1, &binError{Bin: b.String(), At: name, Err: errBinMissing}
		case hops > maxHops:
			return -1, &binError{Bin: b.String(), Err: errBinLoop}
		}
		switch m := &members[i]; {
		case m.Type == tar.TypeLink:
			name, symlinked = m.Linkname, false
		case m.Type == tar.TypeSymlink && path.IsAbs(m.Linkname):
			return -1, nil
		case m.Type == tar.TypeSymlink:
			name, symlinked = path.Join(path.Dir(name), m.Linkname), true
		case m.Type != tar.TypeReg:
			return -1, &binError{Bin: b.String(), At: name, Err: errBinNotFile}
		default:
			return i, nil
		}
	}
}

// throughLink returns the first symlink of the package among the directories of name, a
// path no member has, and the member name is where those symlinks lead, as the kernel
// resolves the path in the installed tree; link is "" where name passes through no symlink,
// and real "" where the path leads out of the package, through too many symlinks, to no
// member or to a directory. A command's path must be its file's own (checkBin): its link in bin/ is made to
// that path in the prefix, and the file it runs is made executable there.
func throughLink(name string, members []tarutil.Member, order []int32) (link, real string) {
	parts := strings.Split(name, "/")
	dir := "" // resolved
	for hops := 0; len(parts) > 1; {
		p := path.Join(dir, parts[0])
		i, ok := lookup(members, order, p)
		if !ok || members[i].Type != tar.TypeSymlink {
			dir, parts = p, parts[1:]
			continue
		}
		if link == "" {
			link = p
		}
		target := path.Join(dir, members[i].Linkname)
		if hops++; hops > maxHops || path.IsAbs(members[i].Linkname) || target == ".." || strings.HasPrefix(target, "../") {
			return link, ""
		}
		dir, parts = "", append(strings.Split(target, "/"), parts[1:]...)
	}
	real = path.Join(dir, parts[0])
	if i, ok := lookup(members, order, real); !ok || link == "" || members[i].Type == tar.TypeDir {
		return link, ""
	}
	return link, real
}

// executable returns members with the files that bin's commands run made executable by
// whoever may read them (0644 becomes 0755), as npm does for the bins of a package whose
// tarball has them 0644; members itself when none needs it. A bin that leads nowhere is
// left to checkBin. order is members' byName.
func executable(bin []repo.Command, members []tarutil.Member, order []int32) []tarutil.Member {
	out, cloned := members, false
	for _, b := range bin {
		i, err := binFile(b, members, order, false)
		if err != nil || i < 0 {
			continue
		}
		if mode := out[i].Mode | out[i].Mode&0o444>>2; mode != out[i].Mode {
			if !cloned {
				out, cloned = slices.Clone(members), true
			}
			out[i].Mode = mode
		}
	}
	return out
}

// makeStaging makes a directory in staging, private (0700), named for the package p and
// nothing else there, and opens it, through no symlink: the top of the tree Stage builds.
func (r *Root) makeStaging(p string) (place, int, error) {
	for {
		tree := place{staging, p + "." + strconv.FormatUint(uint64(rand.Uint32()), 10)}
		err := unix.Mkdirat(r.fd[staging], tree.name, 0o700)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return tree, -1, &os.PathError{Op: "mkdir", Path: r.pathOf(tree), Err: err}
		}
		fd, err := r.open(tree, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			unix.Unlinkat(r.fd[staging], tree.name, unix.AT_REMOVEDIR)
		}
		return tree, fd, err
	}
}

// swapIn renames the staged tree to dst, exchanging it with the tree already there.
func (r *Root) swapIn(tree, dst place) error {
	if _, ok := r.inode(dst); ok {
		return r.exchange(tree, dst)
	}
	return r.rename(tree, dst)
}

// commitTrees makes the trees just renamed into pkgs/ durable with the renames, a
// removal's too, once per commit, before the records' meta page. Where every tree's files
// were waited for, on XFS and ext4 (durable.Files.Ordered) it has nothing to do: the
// records' first sync carries what the filesystem logged before it (db.DB.CommitRequested);
// elsewhere durable.Commit does it, which leaves what others wrote to the filesystem to its
// own time, or an fsync of pkgs/ for a commit that only removes. Where a tree's files were
// not waited for (Staged.whole), one syncfs does it.
func (r *Root) commitTrees(staged []*Staged) error {
	if r.o.NoSync {
		return nil
	}
	whole := slices.ContainsFunc(staged, func(s *Staged) bool { return s.whole })
	if !whole && r.filesys().Ordered() {
		return nil
	}
	fd, err := r.open(place{in: pkgs}, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(fd), r.path("pkgs"))
	defer dir.Close()
	switch {
	case len(staged) == 0:
		return dir.Sync()
	case whole:
		return durable.SyncFS(dir)
	}
	return durable.Commit(dir)
}
