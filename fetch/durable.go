package fetch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/durable"
)

// A fetched entry is written through the page cache and committed without waiting for the
// disk: its index names the boot it was written in. Within that boot the page cache holds
// exactly what was verified, so the entry is used as is; the install that clones from it
// calls Settle, which syncs it and drops the mark. An entry still marked with another boot
// may have lost data in a crash, so its first use hashes all of its data against the
// digests (a damaged one is removed), and the next Settle, or the Cache's Close, settles it
// with the others: one syncfs for all of a command's entries with tails. Where the boot
// cannot be told, entries are synced at fetch, with O_DIRECT (filewriter.go).
const bootIDFile = "/proc/sys/kernel/random/boot_id"

// bootID is this boot's identifier, or "" when the system does not give one.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile(bootIDFile)
	id := strings.TrimSpace(string(b))
	if err != nil || id == "" || strings.ContainsAny(id, " \t\n") {
		return ""
	}
	return id
})

// errReplaced reports an entry that another process removed or fetched again meanwhile.
// Settle skips such an entry without error.
var errReplaced = errors.New("entry replaced meanwhile")

// replaced turns the error of a missing entry file into errReplaced.
func replaced(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errReplaced
	}
	return err
}

// unsynced is an entry Members found marked with a boot: its index and tar as checked, and
// whether all of its data were (an earlier boot's, after a crash).
type unsynced struct {
	idx, tar fs.FileInfo
	checked  bool
}

// Settle makes the cache entries with these sha256s durable, if this Cache found them
// written in this boot and not yet synced, and with them every entry it found written
// before a crash and checked whole (Members): each index is written anew without the boot,
// then the new indexes, the tars and the entries' tails are written back (one syncfs where
// an entry has tails, syncTails, else flushAll), then each index is replaced by its new
// copy, unless the entry changed meanwhile, and one commit makes the lot durable
// (commitTars). An entry that another process removed or fetched again is skipped without
// error: a new copy is synced too or keeps its mark, to have all of its data checked at its
// first use after a reboot. One whose tar fails to sync is removed; where the syncfs
// fails, the entries with tails keep their marks. With NoSync set, the marks are dropped
// without syncing anything. The checks this Cache made and passed are recorded first, for
// the rest of the boot (checks.go): Settle follows a change that committed, or, with no
// sha256s, a command that changes nothing (verify), whose checks hold whatever it found.
func (c *Cache) Settle(shas ...string) error {
	c.checks.flush(c)
	return c.settle(shas)
}

// settle is Settle but for the check log.
func (c *Cache) settle(shas []string) error {
	var todo []string
	var was []unsynced
	take := func(sha string) {
		if u, ok := c.unsettled.LoadAndDelete(sha); ok {
			todo, was = append(todo, sha), append(was, u.(unsynced))
		}
	}
	for _, sha := range shas {
		take(sha)
	}
	c.unsettled.Range(func(sha, u any) bool {
		if u.(unsynced).checked {
			take(sha.(string))
		}
		return true
	})
	if len(todo) == 0 {
		return nil
	}
	tmps, errs := c.settledIndexes(todo, was)
	defer func() {
		for _, tmp := range tmps {
			if tmp != "" {
				unix.Unlinkat(int(c.tmp.Fd()), tmp, 0)
			}
		}
	}()
	// The syncfs that makes the tails durable writes back every other file Settle needs
	// written too: the new indexes and the tars.
	synced, err := c.syncTails(todo)
	if err != nil {
		// Their marks stay: their data are all checked at their first use after a reboot.
		errs = append(errs, fmt.Errorf("settle cache: %w", err))
		for i, sha := range todo {
			if tmps[i] != "" && c.hasTails(sha) {
				unix.Unlinkat(int(c.tmp.Fd()), tmps[i], 0)
				tmps[i] = ""
			}
		}
	}
	var files []fileAt // each new index, then its tar
	for i, sha := range todo {
		if tmps[i] != "" {
			files = append(files, fileAt{c.tmp, tmps[i]}, fileAt{c.tars, tarName(sha)})
		}
	}
	flushed := make([]error, len(files))
	if !synced {
		flushed = c.flushAll(files)
	}
	renamed := false
	for i, sha := range todo {
		if tmps[i] == "" {
			continue
		}
		idxErr, tarErr := flushed[0], flushed[1]
		flushed = flushed[2:]
		if idxErr != nil {
			errs = append(errs, fmt.Errorf("settle cached %s: %w", sha, idxErr))
			continue
		}
		if err := c.replaceIndex(sha, tmps[i], was[i], tarErr); err != nil {
			if !errors.Is(err, errReplaced) {
				errs = append(errs, fmt.Errorf("settle cached %s: %w", sha, err))
			}
			continue
		}
		tmps[i], renamed = "", true
	}
	if renamed {
		if err := c.commitTars(); err != nil {
			errs = append(errs, fmt.Errorf("settle cache: %w", err))
		}
	}
	return errors.Join(errs...)
}

// settledIndexes writes the settled copy of the index of each entry of todo, whose index
// Members found to be was[i].idx (settledIndex), on settleWorkers goroutines, and returns
// their names in tmp/ ("" for none) and the errors of those that failed.
func (c *Cache) settledIndexes(todo []string, was []unsynced) ([]string, []error) {
	tmps := make([]string, len(todo))
	errs := make([]error, len(todo))
	inParallel(len(todo), func(i int) {
		var err error
		if tmps[i], err = c.settledIndex(todo[i], was[i].idx, false); err != nil && !errors.Is(err, errReplaced) {
			errs[i] = fmt.Errorf("settle cached %s: %w", todo[i], err)
		}
	})
	return tmps, slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

// settleWorkers is how many fsyncs Settle runs at once.
const settleWorkers = 4

// inParallel calls fn with each index below n, on up to settleWorkers goroutines.
func inParallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(settleWorkers, n) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				fn(int(i))
			}
		})
	}
	wg.Wait()
}

// fileAt is the file name of the directory d.
type fileAt struct {
	d    *os.File
	name string
}

// flushAll writes files back for commitTars and returns the error of each. Where the
// cache's filesystem orders its metadata in a journal or transactions that durable.Files
// tracks (XFS, ext4, btrfs), each file is written back and waited for, without a journal
// force or a commit of its own: commitTars's one then covers them all and the renames
// after them, as durable.Commit does a root's trees (231 entries took 467 fsyncs).
// Elsewhere each is fsynced, on a few goroutines; a whole-filesystem sync would also
// write what other processes wrote.
func (c *Cache) flushAll(files []fileAt) []error {
	errs := make([]error, len(files))
	wb := durable.ForFS(int(c.tars.Fd()))
	switch {
	case c.NoSync:
		return errs
	case !wb.Tracks():
		return c.fsyncAll(files)
	}
	fs := make([]*os.File, len(files))
	for i, f := range files {
		if fs[i], errs[i] = dirfd.Open(f.d, f.name, unix.O_RDONLY|unix.O_NONBLOCK, 0); errs[i] == nil {
			wb.Start(int(fs[i].Fd()))
		}
	}
	for i, f := range fs {
		if f != nil {
			if err := wb.Wait(int(f.Fd())); err != nil {
				errs[i] = &os.PathError{Op: "write back", Path: f.Name(), Err: err}
			}
			f.Close()
		}
	}
	return errs
}

// commitTars makes the files flushAll wrote back and the renames in tars/ since durable,
// unless c.NoSync is set: durable.Commit of tars/ where flushAll left that to it, else an
// fsync of tars/.
func (c *Cache) commitTars() error {
	if c.NoSync || !durable.ForFS(int(c.tars.Fd())).Tracks() {
		return c.syncTars()
	}
	return durable.Commit(c.tars)
}

// fsyncAll fsyncs files on up to settleWorkers goroutines and returns the error of each.
func (c *Cache) fsyncAll(files []fileAt) []error {
	errs := make([]error, len(files))
	inParallel(len(files), func(i int) { errs[i] = c.fsync(files[i].d, files[i].name) })
	return errs
}

// replaceIndex renames the file tmp of tmp/, synced, over the entry's index, if the index and the tar are
// still the files was describes; synced is the error of the fsync of its tar, which is
// removed if that failed. If the tar changed under the rename, another process is
// fetching the entry again and the rename may have replaced its marked index: its tar's
// data, written before that index, are synced too.
func (c *Cache) replaceIndex(sha, tmp string, was unsynced, synced error) error {
	if err := c.unchanged(sha, was); err != nil {
		return err
	}
	if synced != nil {
		c.drop(sha, was.tar)
		return fmt.Errorf("%w; removed from the cache", synced)
	}
	if err := renameAt(c.tmp, tmp, c.tars, idxName(sha)); err != nil {
		return err
	}
	if tar, err := statAt(c.tars, tarName(sha)); err != nil || !os.SameFile(tar, was.tar) {
		return replaced(c.fsync(c.tars, tarName(sha)))
	}
	return nil
}

// syncTails makes the tails of the entries with these sha256s durable, if any has them,
// unless c.NoSync is set: with one syncfs of the cache's filesystem, as an fsync of each of
// thousands of small files would cost more than the data they hold. It reports whether it
// synced the filesystem.
func (c *Cache) syncTails(shas []string) (bool, error) {
	if c.NoSync || !slices.ContainsFunc(shas, c.hasTails) {
		return false, nil
	}
	if err := durable.SyncFS(c.tars); err != nil {
		return false, err
	}
	return true, nil
}

// fsync fsyncs the file name of the directory d, unless c.NoSync is set.
func (c *Cache) fsync(d *os.File, name string) error {
	if c.NoSync {
		return nil
	}
	return syncAt(d, name)
}

// syncTars makes what was renamed in tars/ durable, unless c.NoSync is set.
func (c *Cache) syncTars() error {
	if c.NoSync {
		return nil
	}
	return c.tars.Sync()
}

// unchanged reports an error unless the entry's index and tar are the files was describes.
func (c *Cache) unchanged(sha string, was unsynced) error {
	idx, err := statAt(c.tars, idxName(sha))
	if err != nil {
		return replaced(err)
	}
	tar, err := statAt(c.tars, tarName(sha))
	if err != nil {
		return replaced(err)
	}
	if !os.SameFile(idx, was.idx) || !os.SameFile(tar, was.tar) {
		return errReplaced
	}
	return nil
}

// settledIndex writes a temporary copy of the entry's index without its boot, synced if sync,
// and returns its name in tmp/; "" if the index has no boot. The index read must be the file idx.
// The copy is the index's owner's: an entry of a user's that root settles (sudo pkg with
// the user's cache) stays theirs to read.
func (c *Cache) settledIndex(sha string, idx fs.FileInfo, sync bool) (string, error) {
	ix, err := openEntryIndex(c.tars, idxName(sha))
	if err != nil {
		return "", replaced(err)
	}
	defer ix.f.Close()
	if !os.SameFile(ix.info, idx) {
		return "", errReplaced
	}
	if ix.err != nil || ix.boot == "" {
		return "", ix.err
	}
	return c.writeTemp("idx", sync, func(w io.Writer) error {
		if err := keepOwner(w.(*os.File), ix.info); err != nil {
			return err
		}
		settled := ix.entryHead
		settled.boot = ""
		if _, err := io.WriteString(w, settled.line()); err != nil {
			return err
		}
		return ix.writeRest(w)
	})
}

// keepOwner gives the new file f the owner of the file it is to replace, was, where they
// differ: only root can, and only root makes another user's file.
func keepOwner(f *os.File, was fs.FileInfo) error {
	st, ok := was.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return nil
	}
	return f.Chown(int(st.Uid), int(st.Gid))
}
