package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/durable"
	"pkg/internal/termtext"
	"pkg/tarutil"
)

// A clone of the aligned tar covers each member's whole blocks, never what follows them: a
// file under a block, or a larger one's last partial block, can be shared on XFS only from a
// source that ends where the member ends (a clone may end off a block only at its source's
// end of file), so an install would write those bytes. Where the filesystem clones them
// (tailsOf), each entry keeps them beside its tar as files of their own, one per member
// with a tail (tarutil.Member.Tail) of the kind the filesystem takes, named by the tail's
// offset in the tar, in decimal:
//
//	tars/<sha256>.tails/<offset>   the tar's bytes from offset to the end of that member's data
//
// An install clones each whole (install, stage.go). They are written at conversion from the
// tar just written, whose pages are still in memory, into tmp/NAME-N.tails beside the
// temporary tar, and renamed into tars/ before the entry's index: an entry's tails are all
// there or not at all. They go with the entry (remove, prune, clean, a damaged entry's drop);
// an entry without them (another filesystem, an older cache) installs as before. The boot
// mark covers them: Settle syncs them with the entry, and an entry marked with another boot
// has them all compared with its tar at its first use; an entry's spot check compares a
// sample of them (spotTails).
const tailsSuffix = ".tails"

// tailKind is which members' tails an entry keeps as files of their own.
type tailKind int

const (
	noTails    tailKind = iota
	allTails            // every member's with a tail (XFS)
	smallTails          // btrfs: tails over tarutil.MaxInline, and members under a block in entries of at most smallTailsFiles files with data
)

// smallTailsFiles is the most files with data an entry on btrfs may have for the tails of
// its members under a block to be kept whatever their size: an install of at most so many
// (install's maxTracked) writes each file back and waits for it on its own, which a clone
// that writes no data skips; one of more leaves its write-back to one syncfs, where a file
// of at most tarutil.MaxInline bytes sent into the tree costs no data block either.
const smallTailsFiles = durable.MaxTracked

// keeps reports whether an entry of the kind k keeps m's tail; small is whether the entry
// has at most smallTailsFiles files with data.
func (k tailKind) keeps(m *tarutil.Member, small bool) bool {
	_, n := m.Tail()
	switch {
	case n == 0:
		return false
	case k == allTails:
		return true
	case k == smallTails:
		return tarutil.SharedTail(m, small)
	}
	return false
}

// tailKind returns the kind of tails the cache's filesystem takes (tailsOf), asked once per
// Cache.
func (c *Cache) tailKind() tailKind {
	c.tailsOnce.Do(func() { c.tails = tailsOf(c.tmp) })
	return c.tails
}

// tailsName is the name, in tars/, of an entry's tails directory.
func tailsName(sha string) string { return sha + tailsSuffix }

// hasTails reports whether the entry with this sha256 keeps its tails.
func (c *Cache) hasTails(sha string) bool { return existsAt(c.tars, tailsName(sha)) }

// tailName is the name of the tail file that begins at off in the tar.
func tailName(off int64) string { return strconv.FormatInt(off, 10) }

// writeTails writes the tails of the members of the temporary tar, whose index is the file
// sums of tmp/, into a new directory of tmp/ beside it (the tar's name, tarName, with
// tailsSuffix), and returns that directory's name; "" where the cache's filesystem does not
// clone them or the entry keeps none (tailKind.keeps). Each file's write-back is
// started at once: a clone waits for its source's dirty pages, and the install that follows
// a fetch clones them within milliseconds. With sync set (no boot to mark the entry with),
// each file is synced.
func (c *Cache) writeTails(tar *os.File, sums, tarName string, sync bool) (_ string, err error) {
	kind := c.tailKind()
	if kind == noTails {
		return "", nil
	}
	ms, err := readMembers(c.tmp, sums, tar)
	if err != nil {
		return "", err
	}
	small := tarutil.DataFiles(ms) <= smallTailsFiles
	ms = slices.DeleteFunc(ms, func(m tarutil.Member) bool { return !kind.keeps(&m, small) })
	if len(ms) == 0 {
		return "", nil
	}
	name := strings.TrimSuffix(tarName, ".tar") + tailsSuffix
	if err := unix.Mkdirat(int(c.tmp.Fd()), name, 0o755); err != nil {
		return "", &os.PathError{Op: "mkdir", Path: inDir(c.tmp, name), Err: err}
	}
	defer func() {
		if err != nil {
			removeTree(c.tmp, name)
		}
	}()
	d, err := dirfd.Open(c.tmp, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer d.Close()
	if err := writeTailFiles(d, tar, ms, sync); err != nil {
		return "", err
	}
	if err := c.owner.giveTree(d); err != nil {
		return "", err
	}
	if sync {
		if err := d.Sync(); err != nil {
			return "", err
		}
	}
	return name, nil
}

// tailWorkers is how many goroutines write tail files. A file's cost is nearly all the
// filesystem's (its inode, its block, its write-back started), partly waits that files
// overlap: the kernel tree's 78,535 tails took 4.0 s on four against 4.9 s on one
// (medians of 10 alternating runs on 2 loaded cores; the same system time).
const tailWorkers = 4

// writeTailFiles writes the tails of the members ms of tar into the directory d, on
// tailWorkers goroutines; after an error, no more files are begun.
func writeTailFiles(d, tar *os.File, ms []tarutil.Member, fsync bool) error {
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, tailWorkers)
	var wg sync.WaitGroup
	for k := range errs {
		wg.Go(func() {
			buf := make([]byte, tarutil.Alignment)
			for i := next.Add(1) - 1; i < int64(len(ms)) && !failed.Load(); i = next.Add(1) - 1 {
				off, n := ms[i].Tail()
				if n == 0 {
					continue
				}
				_, err := tar.ReadAt(buf[:n], off)
				if err == nil {
					err = writeTail(d, tailName(off), buf[:n], fsync)
				}
				if err != nil {
					errs[k] = err
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeTail creates the file name of the directory d holding b, and starts its write-back,
// or syncs it.
func writeTail(d *os.File, name string, b []byte, sync bool) error {
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "create", Path: inDir(d, name), Err: err}
	}
	for len(b) > 0 && err == nil {
		var k int
		k, err = unix.Write(fd, b)
		b = b[k:]
	}
	switch {
	case err != nil:
	case sync:
		err = unix.Fsync(fd)
	default:
		startWriteback(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: inDir(d, name), Err: err}
	}
	return nil
}

// commitTails renames the tails directory name of tmp/ to the entry's in tars/. One there
// already came from a fetch of the same archive that a crash cut short before it committed
// the entry, and anything but a directory there is no entry's: it is replaced. It returns
// false, having removed name, when the rename fails: the entry is then committed without
// tails.
func (c *Cache) commitTails(name, sha string) bool {
	err := renameAt(c.tmp, name, c.tars, tailsName(sha))
	if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTDIR) {
		removeTree(c.tars, tailsName(sha))
		err = renameAt(c.tmp, name, c.tars, tailsName(sha))
	}
	if err != nil {
		removeTree(c.tmp, name)
		return false
	}
	return true
}

// removeTree removes name of d, whatever is there: a file, a link, or a directory and all
// beneath it (tails, or damage). It returns the error of the last removal, as removeAt does.
func removeTree(d *os.File, name string) error {
	err := removeAt(d, name)
	if !errors.Is(err, unix.EISDIR) {
		return err
	}
	if f, err := dirfd.Open(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
		names, _ := f.Readdirnames(-1)
		for _, n := range names {
			removeTree(f, n)
		}
		f.Close()
	}
	if err := unix.Unlinkat(int(d.Fd()), name, unix.AT_REMOVEDIR); err != nil {
		return &os.PathError{Op: "remove", Path: inDir(d, name), Err: err}
	}
	return nil
}

// removeStaleTails removes the tails directories of d, of names (readNames), that old
// reports, given their names and ages, and returns the bytes their files took on disk.
func removeStaleTails(d *os.File, names []string, old func(name string, age time.Duration) bool) int64 {
	var n int64
	for _, name := range names {
		if !strings.HasSuffix(name, tailsSuffix) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		if old(name, time.Since(time.Unix(st.Mtim.Unix()))) {
			n += tailsAllocated(d, name)
			removeTree(d, name)
		}
	}
	return n
}

// spotTails is how many tail files of an entry its spot check compares with the tar: the
// first, the last and others evenly spread, as its headers are sampled; enough to notice
// a tails directory damaged or replaced as a whole. Each costs an open, two reads and a
// close: the npm tree's first warm install in a boot compares 2,392 of its 7,010 tails;
// 2,286 took about 0.02 s more CPU (0.50 s), all of them 0.08 s more.
const spotTails = 16

// checkTails compares the tail files of the entry with this sha256, whose tar is open as
// tar and whose members are ms, with the tar's bytes: every one where all is set (an entry
// written unsynced before a reboot, whose tails may have lost data as its tar may), else
// spotTails of them. A member without a tail file, which an install moves from the tar,
// passes, as does an entry without tails: which members have one depends on the
// filesystem that wrote them (tailsOf), and the cache may have moved since. Which of its
// errors are damage to the entry, Damaged tells.
func (c *Cache) checkTails(sha string, tar *os.File, ms []tarutil.Member, all bool) error {
	d, err := dirfd.Open(c.tars, tailsName(sha), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	} else if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	kept := make(map[string]bool, len(names))
	for _, name := range names {
		kept[name] = true
	}
	var with []int // the members with a tail file
	for i := range ms {
		if off, n := ms[i].Tail(); n > 0 && kept[tailName(off)] {
			with = append(with, i)
		}
	}
	want, got := make([]byte, tarutil.Alignment), make([]byte, tarutil.Alignment+1)
	for k := range tailSample(len(with), all) {
		if err := checkTail(d, tar, &ms[with[k]], want, got); err != nil {
			return err
		}
	}
	return nil
}

// tailSample yields which of n tail files a check compares, in order: all of them where
// all is set or n is at most spotTails, else spotTails evenly spread, the first and the
// last among them.
func tailSample(n int, all bool) iter.Seq[int] {
	return func(yield func(int) bool) {
		count := n
		if !all {
			count = min(n, spotTails)
		}
		for i := range count {
			k := i
			if count < n {
				k = i * (n - 1) / (count - 1)
			}
			if !yield(k) {
				return
			}
		}
	}
}

// errTailDiffers reports a tail file whose bytes are not the tar's: shorter, longer or other.
var errTailDiffers = errors.New("differs from the tar")

// checkTail compares m's tail file, in the tails directory d, with the tar's bytes, reading
// them into want and the file into got, one byte longer. It reads with read(2) itself: a
// FIFO another user put in the file's place, held open for writing, would keep Go's read
// waiting, where read(2) of O_NONBLOCK fails at once.
func checkTail(d, tar *os.File, m *tarutil.Member, want, got []byte) error {
	off, n := m.Tail()
	name := tailName(off)
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil // gone with its entry meanwhile
	} else if err != nil {
		return fmt.Errorf("tail of member %s: %w", termtext.Quote(m.Name), &os.PathError{Op: "open", Path: inDir(d, name), Err: err})
	}
	k, err := unix.Read(fd, got[:n+1])
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("tail of member %s: %w", termtext.Quote(m.Name), &os.PathError{Op: "read", Path: inDir(d, name), Err: err})
	}
	if _, err := tar.ReadAt(want[:n], off); err != nil {
		return fmt.Errorf("tail of member %s: read %s at %d: %w", termtext.Quote(m.Name), tar.Name(), off, err)
	}
	if !bytes.Equal(got[:k], want[:n]) {
		return fmt.Errorf("tail of member %s: %s %w", termtext.Quote(m.Name), inDir(d, name), errTailDiffers)
	}
	return nil
}

// tailsAllocated returns the bytes the files of the tails directory name of dir take on
// disk.
func tailsAllocated(dir *os.File, name string) int64 {
	d, err := dirfd.Open(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var n int64
	for _, name := range names {
		n += allocated(d, name)
	}
	return n
}
