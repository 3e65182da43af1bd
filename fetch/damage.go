package fetch

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/regfile"
	"pkg/tarutil"
)

// ErrDamaged reports a cache entry found damaged, and removed, when it was about to be used.
var ErrDamaged = errors.New("fetch: cached package damaged")

// damagedError is an ErrDamaged naming the entry (entryName) and what is wrong with it,
// its message without the sentinel's package name.
type damagedError struct {
	what string
	err  error
}

func (e *damagedError) Error() string {
	return "cached " + e.what + " is damaged (" + e.err.Error() + "); removed from the cache"
}

func (e *damagedError) Is(target error) bool { return target == ErrDamaged }
func (e *damagedError) Unwrap() error        { return e.err }

// spotBudget is how much member data an entry's first use in a process hashes all of: a
// package with no more data is checked whole. Larger budgets cost a warm sync a noticeable
// share (bench/bootstrap.sh; docs/history.md).
const spotBudget = 1 << 20 // 1 MiB

// spotSample is how much of a larger package's data the check hashes, with its header
// sample (tarutil.SpotCheck): a tar shifted, cut, overwritten or replaced shows in its
// headers and first members, while damage to a few blocks of a large tar escapes any
// sample that costs little (1 MiB of the Go toolchain's 327 MiB, hashed in about 0.8 ms,
// misses a damaged block 996 times in 1000); an entry written unsynced before a reboot,
// which may hold such damage, is hashed whole.
const spotSample = 64 << 10 // 64 KiB

// Members returns the members of the entry with this sha256, with their data offsets and
// digests, from its index, checked against the tar once per Cache: its size, a sample of its
// headers and the digests of its data: all of it up to spotBudget bytes, spotSample bytes
// of more, all of it again when the entry was written unsynced in an earlier boot; and its
// tail files against the tar's bytes, spotTails of them, all of them after such a boot. An
// entry the cache's check log (checks.go) records as checked in this boot, its tar and
// index unchanged since, is not read again: its tar is stat'ed, not opened for reading. A
// damaged entry, or one with anything but a regular file as its tar or index, is removed,
// so that the next Fetch downloads it again, and reported as ErrDamaged. An error of the
// check that shows nothing of the entry's bytes (damage tells which) leaves it in place
// and unchecked: its next use checks it again.
// With c.Whole, an entry not yet checked whole by this Cache is, as after a reboot; with
// c.Unchecked, none is.
func (c *Cache) Members(sha string) ([]tarutil.Member, error) {
	if c.Unchecked {
		return c.unchecked(sha)
	}
	whole := c.Whole
	if e, ok := c.checked.Load(sha); ok && (e.(checkedEntry).whole || !whole) {
		return e.(checkedEntry).members, nil
	}
	ix, err := openEntryIndex(c.tars, idxName(sha))
	if err != nil {
		if info, serr := statAt(c.tars, tarName(sha)); serr == nil && Damaged(err) {
			c.drop(sha, info)
			return nil, &damagedError{entryName(sha, "", ""), err}
		}
		return nil, fmt.Errorf("index of cached %s: %w", sha, err)
	}
	defer ix.f.Close()
	name, version, boot := ix.name, ix.version, ix.boot
	crashed := boot != "" && boot != bootID() // written unsynced before a reboot
	all := crashed || whole                   // every byte and tail checked
	var f *os.File
	var info fs.FileInfo
	if !all && c.checks.recorded(c, sha) { // opened only if changed since (spotCheck)
		info, err = entryFileInfo(c.tars, tarName(sha))
	} else {
		f, info, err = openEntryFile(c.tars, tarName(sha))
	}
	if err != nil && info != nil {
		c.drop(sha, info)
		return nil, &damagedError{entryName(sha, name, version), err}
	} else if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
	}
	ms, err := ix.members(info.Size())
	budget := int64(spotBudget)
	if dataSize(ms) > spotBudget {
		budget = spotSample
	}
	if all {
		budget = math.MaxInt64
	}
	files := checkedFiles{tar: idOf(info), idx: idOf(ix.info)}
	spot := err == nil && (all || !c.checks.passed(c, sha, files))
	if spot {
		var checked fs.FileInfo
		if checked, err = c.spotCheck(sha, f, info, ms, budget, all); checked == nil && err != nil {
			return nil, err
		}
		info, files.tar = checked, idOf(checked)
	}
	what := entryName(sha, name, version)
	if err != nil && !Damaged(err) {
		return nil, fmt.Errorf("check cached %s: %w", what, err)
	}
	if err != nil {
		c.drop(sha, info)
		return nil, &damagedError{what, err}
	}
	if spot && !crashed { // a crashed entry's index is rewritten as it is settled
		c.checks.add(c, sha, files)
	}
	if boot != "" {
		// All of a crashed entry's data checked: settled by the next Settle or Close, with
		// the others, or checked again at its next first use.
		c.unsettled.Store(sha, unsynced{idx: ix.info, tar: info, checked: crashed})
	}
	c.checked.Store(sha, checkedEntry{ms, all, ix.size})
	return ms, nil
}

// unchecked returns the members of the entry with this sha256 as its index lists them,
// the tar not checked against them and the entry left in place (Unchecked).
func (c *Cache) unchecked(sha string) ([]tarutil.Member, error) {
	ix, err := openEntryIndex(c.tars, idxName(sha))
	if err != nil {
		return nil, fmt.Errorf("index of cached %s: %w", sha, err)
	}
	defer ix.f.Close()
	info, err := entryFileInfo(c.tars, tarName(sha))
	if err == nil {
		err = ix.err
	}
	if err != nil {
		return nil, fmt.Errorf("index of cached %s: %w", entryName(sha, ix.name, ix.version), err)
	}
	return ix.members(info.Size())
}

// spotCheck checks the tar f of the entry with this sha256, whose members are ms, and its
// tail files as Members says; f nil, it opens the tar first. It returns what the tar it
// checked is (info where f is given): nil where the open failed before that could be told.
func (c *Cache) spotCheck(sha string, f *os.File, info fs.FileInfo, ms []tarutil.Member, budget int64, all bool) (fs.FileInfo, error) {
	if f == nil {
		var err error
		if f, info, err = openEntryFile(c.tars, tarName(sha)); err != nil {
			return info, err
		}
		defer f.Close()
	}
	if err := tarutil.SpotCheck(f, info.Size(), ms, budget); err != nil {
		return info, err
	}
	return info, c.checkTails(sha, f, ms, all)
}

// Damaged reports whether err, met checking an entry's index, tar and tail files, shows the
// entry's bytes wrong, so that it is removed and fetched again: what the checks found
// different, a file shorter than its index says, anything but a regular file where a file
// is, anything but a directory where the tails are, bytes the filesystem cannot return.
// Any other error says nothing of the entry and keeps it: running out of descriptors or
// memory (EMFILE, ENFILE, ENOMEM), a signal (EINTR), a permission (EACCES, EPERM) pass,
// and dropping a good entry would download it again, or offline leave it unusable. An
// Entry.Err it reports true of is what pkg cache list calls damaged.
func Damaged(err error) bool {
	var notReg *regfile.NotRegularError
	switch {
	case errors.Is(err, tarutil.ErrDamaged), errors.Is(err, tarutil.ErrIndex),
		errors.Is(err, errNotEntryIndex), errors.Is(err, errTailDiffers), errors.As(err, &notReg):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true // a read past a file's end: the tar is shorter than its index says
	}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case unix.ELOOP, // a symlink where a tail file is (O_NOFOLLOW)
		unix.ENOTDIR, // a tails path that is not a directory, a symlink included (O_DIRECTORY)
		unix.EISDIR,  // a directory where a tail file is (read)
		unix.ENXIO,   // a socket where a tail file is (open)
		unix.EAGAIN,  // a FIFO where a tail file is, held open for writing (O_NONBLOCK read)
		unix.EIO,     // blocks the device cannot read, or btrfs's checksum failure: a new fetch writes them afresh
		unix.EUCLEAN, // XFS's EFSCORRUPTED: the file's metadata is damaged
		unix.EBADMSG: // XFS's EFSBADCRC: a metadata block's checksum fails
		return true
	}
	return false
}

// written records the entry with this sha256 as checked, where its tar is the file tar that
// this Cache wrote, in this boot, from the archive it verified: within the boot the page cache
// holds what was verified (durable.go), so Members uses its index without a spot check and,
// with boot set, Settle settles it. Another process's tar committed first is left to Members.
func (c *Cache) written(sha string, tar fs.FileInfo, boot string) {
	now, err := statAt(c.tars, tarName(sha))
	if err != nil || !os.SameFile(now, tar) {
		return
	}
	ix, err := openEntryIndex(c.tars, idxName(sha))
	if err != nil {
		return
	}
	defer ix.f.Close()
	if ix.err != nil || ix.boot != boot {
		return
	}
	ms, err := ix.members(tar.Size())
	if err != nil {
		return
	}
	if boot != "" {
		c.unsettled.Store(sha, unsynced{idx: ix.info, tar: now})
	}
	c.checked.Store(sha, checkedEntry{ms, true, ix.size})
}

// checkedEntry is an entry this Cache checked: its members, whether all of its data, and
// the size of its archive (0 where its index does not record it).
type checkedEntry struct {
	members []tarutil.Member
	whole   bool
	size    int64
}

// openEntryFile opens an entry's tar or index, name in the directory d, and returns what it
// is. Anything but a regular file there (a symlink, a directory or a FIFO another user of a
// shared cache put in its place) is not an entry's: the error, a *regfile.NotRegularError,
// then comes with what the name is, to drop it. Nothing is read: a FIFO a writer holds open
// would block a read, as the descriptor is in Go's poller.
func openEntryFile(d *os.File, name string) (*os.File, fs.FileInfo, error) {
	f, err := dirfd.Open(d, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ELOOP) {
		if info, serr := statAt(d, name); serr == nil {
			return nil, info, &fs.PathError{Op: "open", Path: inDir(d, name), Err: &regfile.NotRegularError{Type: info.Mode().Type()}}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: f.Name(), Err: &regfile.NotRegularError{Type: info.Mode().Type()}}
	}
	if err != nil {
		f.Close()
		return nil, info, err
	}
	return f, info, nil
}

// entryFileInfo returns what an entry's tar or index, name in the directory d, is
// (statAt), without opening it for reading: anything but a regular file there is refused
// as openEntryFile refuses it, with what it is.
func entryFileInfo(d *os.File, name string) (fs.FileInfo, error) {
	info, err := statAt(d, name)
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: inDir(d, name), Err: &regfile.NotRegularError{Type: info.Mode().Type()}}
	}
	return info, err
}

// dataSize returns the bytes of the regular members' data.
func dataSize(ms []tarutil.Member) int64 {
	var n int64
	for i := range ms {
		if ms[i].Type == tar.TypeReg {
			n += ms[i].Size
		}
	}
	return n
}

// entryIndex is an entry's index file, open, with its first line read.
type entryIndex struct {
	f    *os.File
	info fs.FileInfo
	data []byte // the whole file, read at once where it is small (wholeIndex); else nil
	entryHead
	off int64 // where the tar's index (tarutil.AlignEdit) starts
	err error // why the first line is not an entry's
}

// wholeIndex is the largest entry index read whole at its open: the tar's index (rest) is
// then read from memory, where it would take a read for its checksum and more to decode.
const wholeIndex = 64 << 10 // 64 KiB: an index of a few hundred members

// openEntryIndex opens an entry's index file, name in the directory d, and reads its first
// line, or all of it where it is at most wholeIndex. An error is about the file (anything
// but a regular file is refused, as openEntryFile does); one about its first line is in the
// entryIndex.
func openEntryIndex(d *os.File, name string) (*entryIndex, error) {
	f, info, err := openEntryFile(d, name)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 512)
	if info.Size() <= wholeIndex {
		head = make([]byte, info.Size())
	}
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, err
	}
	ix := &entryIndex{f: f, info: info}
	if int64(n) == info.Size() {
		ix.data = head
	}
	var off int
	ix.entryHead, off, ix.err = readEntryHeader(head[:n])
	ix.off = int64(off)
	return ix, nil
}

// members returns the members the index lists of its tar, tarSize bytes long: ix.err
// where its first line is not an entry's.
func (ix *entryIndex) members(tarSize int64) ([]tarutil.Member, error) {
	if ix.err != nil {
		return nil, ix.err
	}
	return tarutil.ReadIndex(ix.rest(), ix.info.Size()-ix.off, tarSize)
}

// rest returns the tar's index.
func (ix *entryIndex) rest() *io.SectionReader {
	if ix.data != nil {
		return io.NewSectionReader(bytes.NewReader(ix.data), ix.off, ix.info.Size()-ix.off)
	}
	return io.NewSectionReader(ix.f, ix.off, ix.info.Size()-ix.off)
}

// writeRest writes to w what follows the index's header, from memory where it was read
// whole, without a copy buffer.
func (ix *entryIndex) writeRest(w io.Writer) error {
	if ix.data != nil {
		_, err := w.Write(ix.data[ix.off:ix.info.Size()])
		return err
	}
	_, err := io.Copy(w, ix.rest())
	return err
}

// drop removes the entry with this sha256, the tar first, unless its tar is no longer the
// file checked: another process may have fetched it again meanwhile.
func (c *Cache) drop(sha string, checked fs.FileInfo) {
	if now, err := statAt(c.tars, tarName(sha)); err != nil || !os.SameFile(now, checked) {
		return
	}
	c.removeEntry(sha)
	c.tars.Sync()
}
