package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/regfile"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/tarutil"
)

// staleAge is how old a file in the cache that no entry owns (a temporary file, digests
// without their tar) must be before it is removed: younger ones may be another process's
// work in progress.
const staleAge = 24 * time.Hour

// A temporary file (a download's tar, a saved index) is flocked while it is written, so one
// that nobody holds and that has not changed for orphanAge was left by a process that died
// (killed, or a second Ctrl-C): it is removed without waiting staleAge. The age keeps a file
// that was created but not yet locked, or written and about to be renamed. An entry's index
// ("idx-") is left to staleAge: Settle writes it before fsyncs that may take longer.
const orphanAge = time.Minute

// entryMagic starts the first line of an entry's index file, which records the size of
// the archive; an entry that entryMagic1 starts, written by an older pkg, does not.
const (
	entryMagic  = "pkg-entry 2"
	entryMagic1 = "pkg-entry 1"
)

// Cache is a directory of aligned tars, each named by the sha256 of the archive it came
// from, with the index of its members, and of the last indexes of repositories. Several
// processes may share one: an entry appears by rename, only once complete and verified.
//
//	tars/<sha256>.tar    the aligned tar: its rename commits the entry
//	tars/<sha256>.idx    "pkg-entry 2 NAME VERSION SIZE [BOOT]\n", then the tar's
//	                     member index (tarutil.AlignEdit): offsets and data digests, so
//	                     an install never scans the tar; SIZE, the archive's bytes; BOOT,
//	                     while the tar written in that boot is not known to be on disk
//	                     (durable.go)
//	tars/<sha256>.tails/ on XFS, the bytes of each member that no clone of the tar's
//	                     blocks covers, as files of their own; on btrfs, those over
//	                     tarutil.MaxInline, and those of the members under a block in
//	                     entries of few files (tails.go)
//	index/<sha256 of the index's location>.json
//	roots/               the roots that install from the cache (roots.go)
//	last-prune           its mtime: when the cache was last pruned (LastPruned)
//	checked.<boot id>.<uid> the entries that user checked in this boot (checks.go)
//	tmp/                 files being written
//	CACHEDIR.TAG         what makes the directory pkg's cache (layout.go)
//
// pkg removes only the files it names so there, never through a symlink, and reaches
// every file through its directory as opened (dirs.go).
type Cache struct {
	dir       string
	use       *os.File // the cache directory, flocked shared while in use, exclusively to remove entries
	tars      *os.File // its subdirectories, opened beneath use through no symlink
	tmp       *os.File
	index     *os.File
	roots     *os.File
	runs      runDir     // run/, opened when first asked for (RunDir)
	only      bool       // the exclusive flock is held: no other process uses the cache
	owner     cacheOwner // whom root hands what it makes here to (owner.go)
	checked   sync.Map   // sha256 → checkedEntry of the entries this Cache has checked
	checks    checkLog   // the entries checked in this boot, by any process (checks.go)
	unsettled sync.Map   // sha256 → unsynced for those of them written in this boot, not yet synced
	names     entryNames // the entries by package name, for sharing (share.go)
	tailsOnce sync.Once
	tails     tailKind // the tails the filesystem takes (tailKind)

	// NoSync makes Settle drop the marks of unsynced entries without syncing them, for
	// throwaway machines (install's --no-sync).
	NoSync bool

	// Whole makes Members check all of an entry's data and tail files, as after a reboot,
	// whatever the check log says, once per entry and Cache: for a reinstall, which must
	// not put back damage a sample of them misses.
	Whole bool

	// Unchecked makes Members return an entry's members as its index lists them, the tar
	// not checked against them and a damaged entry left in place: for a Cache that only
	// tells which files lie on a tar's blocks and trusts none of its bytes (pkg verify
	// --full, whose check would otherwise remove an entry damaged within its sample before
	// the files cloned from it could be laid to it). Nothing it returns is recorded as
	// checked.
	Unchecked bool

	// Waiting, if not nil, is called when Fetch waits for another fetch of the same
	// archive into the cache, by another process or goroutine, to end, with the pids of
	// the processes holding it where /proc/locks tells them; by several goroutines at once
	// when several fetches run. After WaitLimit (if not 0), Fetch downloads the archive
	// too, calling Waiting again with nil pids.
	Waiting   func(p repo.Package, pids []int)
	WaitLimit time.Duration

	// ReadOnly makes VerifiedIndex keep no copy of the index it reads, for a dry run.
	ReadOnly bool

	temporary string // the directory OpenCacheReadOnly made, which Close removes
}

// Entry is a package in the cache.
type Entry struct {
	SHA256  string // of the published archive
	Name    string
	Version string
	Size    int64     // bytes of the aligned tar
	Used    time.Time // when it was last fetched or installed from, to within useResolution
	Err     error     // why Name and Version are not known: its index is unreadable or damaged, or its tar is no regular file (Size 0)
}

// OpenCache opens the cache at dir, making it there if dir is new or empty; it refuses
// any other directory without pkg's CACHEDIR.TAG (ErrNotCache), and a cache this process
// cannot write. It removes stale temporary files. The Cache holds a shared lock of the
// cache until it is no longer used, so that no other process removes entries it may be
// about to install from (Exclusive); it waits for such a removal to end, which takes no
// root's lock, until ctx is done. A relative dir is made absolute, as the cache records
// run roots by their paths in it (AddRoot) and lists only absolute ones (Roots).
func OpenCache(ctx context.Context, dir string) (*Cache, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	if err := makeCacheDir(dir); err != nil {
		return nil, fmt.Errorf("create cache: %w", err)
	}
	use, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	if err := waitShared(ctx, use); err != nil && !noFlock(err) {
		use.Close()
		return nil, fmt.Errorf("lock cache %s: %w", dir, err)
	}
	owner, err := ownerOfDir(use, dir)
	if err != nil {
		use.Close()
		return nil, fmt.Errorf("open cache: %w", err)
	}
	if err := layout(use, dir, owner); err != nil {
		use.Close()
		return nil, err
	}
	c := &Cache{dir: dir, use: use, owner: owner}
	if err := c.openSubdirs(); err != nil {
		c.Close()
		return nil, err
	}
	if err := writable(dir, c.tmp); err != nil {
		c.Close()
		return nil, err
	}
	c.removeTemporary()
	return c, nil
}

// openSubdirs opens the subdirectories of the cache that layout made.
func (c *Cache) openSubdirs() error {
	for _, sub := range []struct {
		f    **os.File
		name string
	}{{&c.tars, "tars"}, {&c.tmp, "tmp"}, {&c.index, "index"}, {&c.roots, "roots"}} {
		f, err := c.openSubdir(sub.name)
		if err != nil {
			return fmt.Errorf("open cache: %w", err)
		}
		*sub.f = f
	}
	return nil
}

// writable refuses the cache at dir unless this process can write its directory tmp: every
// use does (its entries are private to their owner), so it says so at once.
func writable(dir string, tmp *os.File) error {
	err := unix.Faccessat(int(tmp.Fd()), ".", unix.W_OK, 0)
	if err == nil {
		return nil
	}
	var st unix.Stat_t
	why := "not yours to write"
	switch {
	case errors.Is(err, unix.EROFS):
		why = "on a read-only filesystem"
	case unix.Fstat(int(tmp.Fd()), &st) == nil && int(st.Uid) == os.Geteuid():
		return &ReadOnlyError{Dir: dir, Path: tmp.Name(), Mode: fs.FileMode(st.Mode & 0o7777)}
	}
	return fmt.Errorf("cache %s is %s: %w", dir, why, &os.PathError{Op: "access", Path: tmp.Name(), Err: err})
}

// A ReadOnlyError is a cache of the user's own that they cannot write, as every use does.
type ReadOnlyError struct {
	Dir  string
	Path string // the directory found not writable
	Mode fs.FileMode
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("cache %s is yours but read-only (%s is mode %04o), and every use writes to it: make it writable (chmod -R u+w %s)",
		e.Dir, e.Path, uint32(e.Mode), e.Dir)
}

// Close ends c's use of the cache: its lock is released. c must not be used after. The
// entries it found written before a crash and checked whole since, and did not settle,
// are settled first (Settle), but for a dry run's: where that fails, they keep their marks.
func (c *Cache) Close() error {
	if !c.ReadOnly {
		c.settle(nil)
	}
	for _, d := range []*os.File{c.tars, c.tmp, c.index, c.roots, c.runs.f} {
		if d != nil {
			d.Close()
		}
	}
	c.checks.close()
	err := c.use.Close()
	if c.temporary != "" {
		os.RemoveAll(c.temporary)
	}
	return err
}

// Share returns another Cache of c's directory for this process, holding c's lock with it:
// the cache is in use until both are closed, and either may become its only user
// (Exclusive) while the other is open, as two Caches opened apart cannot. A temporary
// cache (Temporary), which its Close removes, is not shared.
func (c *Cache) Share() (*Cache, error) {
	if c.temporary != "" {
		return nil, fmt.Errorf("share cache %s: a dry run's temporary cache is not shared", c.dir)
	}
	s := &Cache{dir: c.dir, only: c.only, owner: c.owner, NoSync: c.NoSync, ReadOnly: c.ReadOnly}
	for _, d := range []struct{ to, from **os.File }{{&s.use, &c.use}, {&s.tars, &c.tars}, {&s.tmp, &c.tmp}, {&s.index, &c.index}, {&s.roots, &c.roots}} {
		f, err := dup(*d.from)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("share cache %s: %w", c.dir, err)
		}
		*d.to = f
	}
	return s, nil
}

// Temporary reports whether c stands, for a dry run, for a cache that does not exist yet
// (OpenCacheReadOnly).
func (c *Cache) Temporary() bool { return c.temporary != "" }

// OpenCacheReadOnly opens the cache at dir, as OpenCache does, so that a dry run changes
// nothing in it: it keeps no index it reads (ReadOnly), and a cache that does not exist
// yet is read as an empty one in a temporary directory, which Close removes.
func OpenCacheReadOnly(ctx context.Context, dir string) (*Cache, error) {
	tmp := ""
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if tmp, err = os.MkdirTemp("", "pkg-dry-run-"); err != nil {
			return nil, err
		}
		dir = tmp
	}
	c, err := OpenCache(ctx, dir)
	if err != nil {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
		return nil, err
	}
	c.ReadOnly, c.temporary = true, tmp
	return c, nil
}

// Exclusive makes c the only user of the cache, to remove entries: it waits, until ctx is done,
// for the other processes using the cache to end, calling waiting once if it must, with
// their pids where /proc/locks tells them. While it waits, c and its shares hold no lock.
func (c *Cache) Exclusive(ctx context.Context, waiting func(pids []int)) error {
	for first := true; ; first = false {
		err := flock(c.use, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			if err != nil && !noFlock(err) {
				return fmt.Errorf("lock cache %s: %w", c.dir, err)
			}
			c.only = err == nil
			return nil
		}
		if first && waiting != nil {
			waiting(lockers(c.use))
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			// flock(2) dropped the shared lock to try, for c and its shares: given up,
			// they hold it again. (Taken between tries, two processes waiting so would
			// each keep the other from ever getting the cache.)
			if lerr := flock(c.use, unix.LOCK_SH); lerr != nil {
				return fmt.Errorf("lock cache %s: %w", c.dir, lerr)
			}
			return err
		}
	}
}

// TryExclusive makes c the only user of the cache, as Exclusive does, if no other process
// uses it now, and reports whether it did. Otherwise c holds its shared lock again, taken
// anew: flock(2) drops it to try, so a prune that was waiting may have run in between.
func (c *Cache) TryExclusive() (bool, error) {
	switch err := flock(c.use, unix.LOCK_EX|unix.LOCK_NB); {
	case err == nil:
		c.only = true
		return true, nil
	case noFlock(err):
		return true, nil
	case !errors.Is(err, unix.EWOULDBLOCK):
		return false, fmt.Errorf("lock cache %s: %w", c.dir, err)
	}
	if err := flock(c.use, unix.LOCK_SH); err != nil {
		return false, fmt.Errorf("lock cache %s: %w", c.dir, err)
	}
	return false, nil
}

// lockers returns the pids of the other processes holding a flock of f, from /proc/locks,
// or nil.
func lockers(f *os.File) []int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	// "1: FLOCK  ADVISORY  READ 1234 08:01:5678 0 EOF"; waiters have "->" after the number.
	// The device is the superblock's, which on btrfs is not the one stat gives: a match of
	// the inode alone is taken when nothing matches both.
	file := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	ino := ":" + strconv.FormatUint(st.Ino, 10)
	var exact, loose []int
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || !strings.HasSuffix(f[5], ino) {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if f[5] == file && !slices.Contains(exact, pid) {
			exact = append(exact, pid)
		} else if !slices.Contains(loose, pid) {
			loose = append(loose, pid)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return loose
}

// noFlock reports whether err says the filesystem locks no directory (some NFS setups):
// pkg goes on unlocked there, as it did before it locked.
func noFlock(err error) bool {
	return errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP)
}

// waitShared takes a shared lock of the cache use, waiting until ctx is done for a removal
// holding it exclusively to end: tried without blocking, as a blocked flock(2) would not
// end at an interrupt.
func waitShared(ctx context.Context, use *os.File) error {
	for {
		err := flock(use, unix.LOCK_SH|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// flock applies how to f, again when interrupted by a signal.
func flock(f *os.File, how int) error {
	for {
		if err := unix.Flock(int(f.Fd()), how); err != unix.EINTR {
			return err
		}
	}
}

// Path returns a path to the aligned tar of the archive with this sha256, for this
// process while c is open: through the cache's tars/ as c opened it (dirfd.Path), so that
// what opens it reads the cache's tar whatever took that directory's name meanwhile.
func (c *Cache) Path(sha string) string { return dirfd.Path(c.tars) + "/" + tarName(sha) }

// tarName and idxName are the names, in tars/, of an entry's tar and index.
func tarName(sha string) string { return sha + ".tar" }
func idxName(sha string) string { return sha + ".idx" }

// Has reports whether the archive with this sha256 is in the cache.
func (c *Cache) Has(sha string) bool {
	return existsAt(c.tars, tarName(sha)) && existsAt(c.tars, idxName(sha))
}

// errNotEntryIndex reports an index file whose first line is not an entry's.
var errNotEntryIndex = errors.New("not an entry index")

// entryHead is the first line of an entry's index file.
type entryHead struct {
	name, version string
	size          int64  // of the archive; 0 where an older pkg wrote the entry
	boot          string // "" once the entry is settled
}

// readEntryHeader reads the first line of an entry's index file, at the start of data,
// and returns the offset of what follows.
func readEntryHeader(data []byte) (h entryHead, rest int, err error) {
	i := bytes.IndexByte(data[:min(len(data), 512)], '\n')
	if i < 0 {
		return h, 0, errNotEntryIndex
	}
	var f []string // NAME VERSION SIZE [BOOT]
	if tail, ok := strings.CutPrefix(string(data[:i]), entryMagic+" "); ok {
		f = strings.Fields(tail)
	} else if tail, ok := strings.CutPrefix(string(data[:i]), entryMagic1+" "); ok {
		if f = strings.Fields(tail); len(f) >= 2 {
			f = slices.Insert(f, 2, "0")
		}
	}
	if len(f) != 3 && len(f) != 4 {
		return h, 0, errNotEntryIndex
	}
	h = entryHead{name: f[0], version: f[1]}
	if h.size, err = strconv.ParseInt(f[2], 10, 64); err != nil || h.size < 0 {
		return entryHead{}, 0, errNotEntryIndex
	}
	if len(f) == 4 {
		h.boot = f[3]
	}
	return h, i + 1, nil
}

// Fetch makes sure the aligned tar of p is in the cache, downloading and converting it if
// needed, and returns its path. The entry appears only once its size and sha256 match p.
// The archive's bytes are also written to progress, when it is not nil, as they arrive.
// Of several fetches of one archive into one cache at once, one downloads it and the others
// wait for it to end, then use its entry.
func (c *Cache) Fetch(ctx context.Context, s *Source, p repo.Package, progress io.Writer) (string, error) {
	dst := c.Path(p.SHA256)
	ok, err := c.cached(p)
	offline := s == nil || s.offline // nil: no repository, the cache alone
	switch {
	case ok && err != nil:
		return "", err
	case ok:
		return dst, nil
	case err != nil && offline:
		return "", fmt.Errorf("%w; %w", err, &offlineError{"not fetched again"})
	case offline:
		return "", &offlineError{p.Name + " " + p.Version + " is not in the cache"}
	}
	release, err := c.claim(ctx, p)
	if err != nil {
		return "", &packageError{p.Name, p.Version, "", err}
	}
	defer release()
	if ok, err := c.cached(p); ok && err != nil { // committed by the fetch that held the claim
		return "", err
	} else if ok {
		return dst, nil
	}
	if err := c.fetchArchive(ctx, s, p, progress); err != nil {
		return "", s.denied(err)
	}
	return dst, nil
}

// dropLeftover takes away the tar of sha256 that a cut copy of the cache left without its
// index. It moves it to tmp/ first, and puts it back where the index has come meanwhile:
// another process committed the entry between the look and the move, and the tar was its.
func (c *Cache) dropLeftover(sha256 string) {
	moved := fmt.Sprintf("leftover-%s.%d", sha256[:16], time.Now().UnixNano())
	if unix.Renameat(int(c.tars.Fd()), tarName(sha256), int(c.tmp.Fd()), moved) != nil {
		return // none there
	}
	if existsAt(c.tars, idxName(sha256)) {
		unix.Linkat(int(c.tmp.Fd()), moved, int(c.tars.Fd()), tarName(sha256), 0) // EEXIST: theirs is in
	}
	removeTree(c.tmp, moved)
}

// cached reports whether the cache holds p's entry, undamaged, and marks its use. A
// damaged entry (removed by Members) makes it return false and why; one whose archive is
// not of the size p declares, true and a *SizeError, as its download would. A size of 0
// declares none: a package made of a root's record, which keeps none, has it.
func (c *Cache) cached(p repo.Package) (bool, error) {
	var tar unix.Stat_t // one fstatat each: what Has looks at, and the tar's mtime
	if unix.Fstatat(int(c.tars.Fd()), tarName(p.SHA256), &tar, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false, nil
	}
	if !existsAt(c.tars, idxName(p.SHA256)) {
		return false, nil
	}
	if _, err := c.Members(p.SHA256); errors.Is(err, ErrDamaged) {
		return false, err
	}
	if e, ok := c.checked.Load(p.SHA256); ok {
		if size := e.(checkedEntry).size; size != 0 && p.Size != 0 && size != p.Size {
			return true, &SizeError{Name: p.Name, Version: p.Version, Declared: p.Size, Size: size}
		}
	}
	markUsed(c.tars, tarName(p.SHA256), time.Unix(tar.Mtim.Unix()))
	return true, nil
}

// CheckSize returns a *SizeError where the cache c holds p's entry and its archive is not
// of the size p declares, as a use of the entry would refuse it; nil where it holds none,
// or one that records no size. It reads the entry's index header alone, and changes nothing.
func CheckSize(c *Cache, p repo.Package) error {
	if p.Size == 0 {
		return nil
	}
	ix, err := openEntryIndex(c.tars, idxName(p.SHA256))
	if err != nil {
		return nil // no entry, or one a use finds damaged and fetches again
	}
	defer ix.f.Close()
	if ix.err == nil && ix.size != 0 && ix.size != p.Size {
		return &SizeError{Name: p.Name, Version: p.Version, Declared: p.Size, Size: ix.size}
	}
	return nil
}

// useResolution is how precisely an entry's last use is kept: within it, a use writes
// nothing, so that a command run in a loop does not dirty the tar's inode each time.
// Limits are days and orders, not minutes.
const useResolution = time.Hour

// markUsed records, best effort, that the entry whose tar is name in tars, of mtime was,
// is used now: its tar's mtime is its last use (Entry.Used), set in one utimensat.
// UTIME_NOW needs only write access, which the cache's user has.
func markUsed(tars *os.File, name string, was time.Time) {
	if time.Since(was) < useResolution {
		return
	}
	now := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_NOW}}
	unix.UtimesNanoAt(int(tars.Fd()), name, now, unix.AT_SYMLINK_NOFOLLOW)
}

// claim takes the lock that makes one fetch at a time download p's archive into the
// cache: a flock of tmp/fetch-SHA256, waited for until ctx is done or for c.WaitLimit.
// release removes the file and unlocks it. Where the file cannot be made or locked, or the
// wait is over, claim lets the fetch go on without it.
func (c *Cache) claim(ctx context.Context, p repo.Package) (release func(), err error) {
	name := "fetch-" + p.SHA256
	none := func() {}
	var deadline time.Time // of the wait, once it began
	var f *os.File         // kept open across tries
	for {
		if f == nil {
			if f, err = dirfd.Open(c.tmp, name, unix.O_RDWR|unix.O_CREAT, 0o644); err != nil {
				return none, nil
			}
			if c.owner.give(int(f.Fd()), f.Name()) != nil {
				f.Close()
				return none, nil
			}
		}
		switch err := flock(f, unix.LOCK_EX|unix.LOCK_NB); {
		case err == nil && sameFile(f, c.tmp, name):
			return func() { unix.Unlinkat(int(c.tmp.Fd()), name, 0); f.Close() }, nil
		case err == nil: // removed by the fetch that held it: take the one there now
			f.Close()
			f = nil
			continue
		case !errors.Is(err, unix.EWOULDBLOCK): // a filesystem that locks nothing
			f.Close()
			unix.Unlinkat(int(c.tmp.Fd()), name, 0)
			return none, nil
		case deadline.IsZero():
			deadline = time.Now().Add(c.WaitLimit)
			if c.Waiting != nil {
				c.Waiting(p, lockers(f))
			}
		case c.WaitLimit > 0 && time.Now().After(deadline):
			f.Close()
			if c.Waiting != nil {
				c.Waiting(p, nil)
			}
			return none, nil
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			f.Close()
			return nil, err
		}
	}
}

// sameFile reports whether f is the file name of the directory d.
func sameFile(f *os.File, d *os.File, name string) bool {
	held, err1 := f.Stat()
	now, err2 := statAt(d, name)
	return err1 == nil && err2 == nil && os.SameFile(held, now)
}

// store converts the archive read from src into temporary files and, once src has verified
// it, renames them into place: the digests, then the tar, which commits the entry. Before
// that, the tar shares the blocks of the files it has in common with the package's other
// entries (share.go). Only when this boot cannot be told are the index and the tar synced,
// and the renames made durable (durable.go): an entry marked with the boot waits for no
// disk, as an fsync on XFS waits for a journal write queued behind the tar's writeback
// (docs/history.md). After a crash such an entry is gone, or its index is unreadable (the
// entry is removed at first use) or carries the old boot (its data are all checked): a
// journal orders the tar's link after the index's rename. When another process committed it
// first, store drops its own copy (linkTar: where their tar has its bytes).
func (c *Cache) store(src io.Reader, p repo.Package) (err error) {
	tmp, err := c.createTemp(repo.FileName(p.Name) + "-*.tar")
	if err != nil {
		return err
	}
	name := filepath.Base(tmp.Name())
	// Until the rename, a second descriptor holds the lock that tells removeTemporary the
	// file is being written; tmp itself is closed before.
	if lk, err := dirfd.Open(c.tmp, name, unix.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
		defer lk.Close()
		unix.Flock(int(lk.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	sums := ""  // the temporary index file's name in tmp/, until renamed
	tails := "" // the temporary tails directory's, until renamed
	drop := func() {
		tmp.Close()
		unix.Unlinkat(int(c.tmp.Fd()), name, 0)
		if sums != "" {
			unix.Unlinkat(int(c.tmp.Fd()), sums, 0)
		}
		if tails != "" {
			removeTree(c.tmp, tails)
		}
	}
	defer func() {
		if err != nil {
			drop()
		}
	}()
	boot := bootID()
	settled := boot == ""
	if sums, err = c.convertInto(tmp, src, p, boot); err != nil {
		return err
	}
	c.share(tmp, sums, p)
	// Tails are what an install of the entry saves by; one that cannot have them (a full
	// disk, say) installs as before.
	tails, _ = c.writeTails(tmp, sums, name, settled)
	if settled {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	info, err := tmp.Stat()
	if err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if c.Has(p.SHA256) {
		drop()
		c.names.add(p)
		return nil
	}
	// A tar without its index is no entry (the index goes in first, and out last) but what
	// a cut copy of the cache left: it goes before the index that would make it one.
	if !existsAt(c.tars, idxName(p.SHA256)) {
		c.dropLeftover(p.SHA256)
	}
	if tails != "" {
		c.commitTails(tails, p.SHA256)
		tails = ""
	}
	err = c.renameIn(sums, idxName(p.SHA256), settled)
	if errors.Is(err, unix.EISDIR) { // a directory in the index's place is no entry's (damage)
		removeTree(c.tars, idxName(p.SHA256))
		err = c.renameIn(sums, idxName(p.SHA256), settled)
	}
	if err != nil {
		return err
	}
	sums = ""
	if err := c.linkTar(name, p.SHA256, settled); err != nil {
		return err
	}
	c.names.add(p)
	c.written(p.SHA256, info, boot)
	return nil
}

// convertInto converts the archive read from src into the temporary tar tmp and returns the
// name, in tmp/, of the temporary index file it writes as the members pass (so that no
// list of them is held), with boot in its header, synced when boot is "". The index is
// locked while written, as the tar is, so that one a killed fetch left goes after orphanAge.
func (c *Cache) convertInto(tmp *os.File, src io.Reader, p repo.Package, boot string) (string, error) {
	fw := newFileWriter(tmp, boot == "")
	return c.writeTemp("index", boot == "", func(w io.Writer) error {
		bw := indexWriters.Get().(*bufio.Writer)
		bw.Reset(w)
		defer func() {
			bw.Reset(nil)
			indexWriters.Put(bw)
		}()
		bw.WriteString(entryHead{name: p.Name, version: p.Version, size: p.Size, boot: boot}.line())
		st, err := convert(fw, src, conversion{lim: tarutil.Limits{Bytes: p.InstalledSize, Files: p.Files}, tmp: dirfd.Path(c.tmp), idx: bw})
		if err != nil {
			fw.abort()
			return err
		}
		if err := fw.Close(); err != nil {
			return err
		}
		if err := p.CheckContents(st.Files, st.Bytes); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// indexWriters keeps the buffers in front of the temporary index files for the process's
// next conversions.
var indexWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// renameIn renames the file from of tmp/ to to of tars/, durably when settled.
func (c *Cache) renameIn(from, to string, settled bool) error {
	if err := renameAt(c.tmp, from, c.tars, to); err != nil || !settled {
		return err
	}
	return c.tars.Sync()
}

// linkTar commits the entry with this sha256 whose index is in place: the tar name of tmp/
// is linked into tars/, not renamed over, so that another process that committed the same
// entry meanwhile keeps its tar, which a root may have cloned from already, once its bytes
// are found to be name's; any other tar there is replaced. Then name goes.
func (c *Cache) linkTar(name, sha string, settled bool) error {
	switch err := linkAt(c.tmp, name, c.tars, tarName(sha)); {
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EMLINK):
		return c.renameIn(name, tarName(sha), settled) // a filesystem without hard links
	case errors.Is(err, fs.ErrExist) && !c.sameTar(name, sha):
		return c.renameIn(name, tarName(sha), settled)
	case errors.Is(err, fs.ErrExist): // nothing new in tars/ but the index
		unix.Unlinkat(int(c.tmp.Fd()), name, 0)
		return nil
	case err != nil:
		return err
	}
	unix.Unlinkat(int(c.tmp.Fd()), name, 0)
	if !settled {
		return nil
	}
	return c.tars.Sync()
}

// sameTar reports whether the tar of the entry with this sha256 is a regular file of the
// bytes of the file name of tmp/. Any error reading either reports false.
func (c *Cache) sameTar(name, sha string) bool {
	ours, err := dirfd.Open(c.tmp, name, unix.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer ours.Close()
	theirs, info, err := openEntryFile(c.tars, tarName(sha))
	if err != nil {
		return false
	}
	defer theirs.Close()
	if mine, err := ours.Stat(); err != nil || mine.Size() != info.Size() {
		return false
	}
	a, b := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		n, err := io.ReadFull(ours, a)
		if _, err := io.ReadFull(theirs, b[:n]); err != nil || !bytes.Equal(a[:n], b[:n]) {
			return false
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// line is h as the first line of an entry's index: of an older pkg's form where it does
// not know the archive's size.
func (h entryHead) line() string {
	l := entryMagic + " " + h.name + " " + h.version + " " + strconv.FormatInt(h.size, 10)
	if h.size == 0 {
		l = entryMagic1 + " " + h.name + " " + h.version
	}
	if h.boot != "" {
		l += " " + h.boot
	}
	return l + "\n"
}

// writeTemp writes a new temporary file of the cache with fill, syncs it if sync is set,
// and returns its name in tmp/.
func (c *Cache) writeTemp(pattern string, sync bool, fill func(io.Writer) error) (_ string, err error) {
	f, err := c.createTemp(pattern + "-*")
	if err != nil {
		return "", err
	}
	name := filepath.Base(f.Name())
	unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) // until closed: see orphanAge
	defer func() {
		if err != nil {
			f.Close()
			unix.Unlinkat(int(c.tmp.Fd()), name, 0)
		}
	}()
	if err := fill(f); err != nil {
		return "", err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return "", err
		}
	}
	return name, f.Close()
}

// writeFile replaces the file name of the cache's directory d with what fill writes,
// atomically and durably.
func (c *Cache) writeFile(d *os.File, name string, fill func(io.Writer) error) error {
	tmp, err := c.writeTemp(name, true, fill)
	if err != nil {
		return err
	}
	if err := renameAt(c.tmp, tmp, d, name); err != nil {
		unix.Unlinkat(int(c.tmp.Fd()), tmp, 0)
		return err
	}
	return d.Sync()
}

// List returns the entries of the cache, by name, version and sha256.
func (c *Cache) List() ([]Entry, error) {
	names, err := readNames(c.tars)
	if err != nil {
		return nil, fmt.Errorf("list cache: %w", err)
	}
	var es []Entry
	for _, name := range names {
		sha, ok := strings.CutSuffix(name, ".tar")
		if !ok || !isSHA256(sha) {
			continue
		}
		info, err := statAt(c.tars, name)
		if err != nil {
			continue
		}
		e := Entry{SHA256: sha, Size: info.Size(), Used: info.ModTime()}
		if !info.Mode().IsRegular() { // damage, listed as such: a clean removes it
			e.Size, e.Err = 0, &fs.PathError{Op: "open", Path: inDir(c.tars, name), Err: &regfile.NotRegularError{Type: info.Mode().Type()}}
			es = append(es, e)
			continue
		}
		f, _, err := openEntryFile(c.tars, idxName(sha)) // never a read of a FIFO, which blocks
		if err == nil {
			head := make([]byte, 512)
			n, _ := io.ReadFull(f, head)
			var h entryHead
			h, _, err = readEntryHeader(head[:n])
			e.Name, e.Version = h.name, h.version
			if err != nil {
				err = &fs.PathError{Op: "read", Path: f.Name(), Err: err}
			}
			f.Close()
		}
		e.Err = err
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int {
		if a.Name != b.Name {
			return strings.Compare(a.Name, b.Name)
		}
		if v := repo.CompareVersions(a.Version, b.Version); v != 0 {
			return v
		}
		return strings.Compare(a.SHA256, b.SHA256)
	})
	return es, nil
}

// removeEntry removes the entry sha: its tar, then its index and tails (a directory at
// either name too: damage), and forgets its check. An error is the tar's, whose removal
// leaves the rest.
func (c *Cache) removeEntry(sha string) error {
	if err := removeTree(c.tars, tarName(sha)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	removeTree(c.tars, idxName(sha))
	removeTree(c.tars, tailsName(sha))
	c.checked.Delete(sha)
	return nil
}

// removeEntries deletes the entries keep returns false for, the tar first, and returns them. It
// also removes stale indexes whose tar is gone.
func (c *Cache) removeEntries(keep func(Entry) bool) ([]Entry, error) {
	es, err := c.List()
	if err != nil {
		return nil, err
	}
	var removed []Entry
	for _, e := range es {
		if keep(e) {
			continue
		}
		if err := c.removeEntry(e.SHA256); err != nil {
			return removed, fmt.Errorf("remove %s from the cache: %w", entryName(e.SHA256, e.Name, e.Version), err)
		}
		removed = append(removed, e)
	}
	names, _ := readNames(c.tars)
	removeOld(c.tars, names, func(_ *os.File, name string, age time.Duration) bool {
		sha, ok := strings.CutSuffix(name, ".idx")
		return age > staleAge && ok && isSHA256(sha) && !c.Has(sha)
	})
	removeStaleTails(c.tars, names, func(name string, age time.Duration) bool {
		sha := strings.TrimSuffix(name, tailsSuffix)
		return age > staleAge && isSHA256(sha) && !existsAt(c.tars, tarName(sha))
	})
	return removed, c.tars.Sync()
}

// RemoveUnfinished removes what downloads that were killed left in tmp/, which the cache
// otherwise keeps for a while (removeTemporary), and returns its bytes. It does so only
// while c is the cache's only user (Exclusive): then nothing there is being written.
func (c *Cache) RemoveUnfinished() int64 {
	if !c.only {
		return 0
	}
	names, _ := readNames(c.tmp)
	n := removeOld(c.tmp, names, func(_ *os.File, name string, _ time.Duration) bool { return ownTemp(name) })
	return n + removeStaleTails(c.tmp, names, func(name string, _ time.Duration) bool {
		return ownTemp(strings.TrimSuffix(name, tailsSuffix) + ".tar")
	})
}

// entryName names an entry in messages: its package and version, or, when its index could
// not be read, its sha256. The name and version come from the index file, which another
// user of a shared cache may write: escaped (termtext.Safe).
func entryName(sha, name, version string) string {
	if name == "" {
		return "entry " + sha
	}
	return termtext.Safe(name + " " + version)
}

// removeTemporary removes the temporary files of tmp/ that are older than staleAge, and
// those no live process holds that are older than orphanAge.
func (c *Cache) removeTemporary() {
	names, _ := readNames(c.tmp)
	removeOld(c.tmp, names, func(dir *os.File, name string, age time.Duration) bool {
		switch {
		case !ownTemp(name) || age < orphanAge:
			return false
		case age > staleAge:
			return true
		case strings.HasPrefix(name, "idx-"), isPartial(name):
			return false // left to staleAge: see orphanAge, and partial.go
		}
		// Read-write: NFS locks a file opened read-only only shared.
		fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		defer unix.Close(fd)
		return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil // nobody writes it
	})
	// A fetch's tails go with its temporary tar, which is there until the fetch ends.
	removeStaleTails(c.tmp, names, func(name string, age time.Duration) bool {
		tar := strings.TrimSuffix(name, tailsSuffix) + ".tar"
		return ownTemp(tar) && (age > staleAge || age > orphanAge && !existsAt(c.tmp, tar))
	})
}

// Contents is what Inspect finds in an archive.
type Contents struct {
	tarutil.Stats
	Control *Control // a .deb's control fields; nil for other archives
}

// Inspect reads a local archive the way Fetch would and returns what it holds, refusing
// anything an install would refuse. A .deb's control member is read too. Its reads fail
// once ctx is done, a zip's read in place included, which stops the decompressor, the
// host's xz included.
func Inspect(ctx context.Context, path string) (Contents, error) {
	f, err := regfile.Open(path, 0)
	if err != nil {
		return Contents{}, err
	}
	defer f.Close()
	var c Contents
	src := &localArchive{f, ctx, 0}
	c.Stats, err = convert(io.Discard, src, conversion{local: src, control: &c.Control})
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
