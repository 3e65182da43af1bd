package fetch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"pkg/internal/durable"
)

// A fetched entry is written through the page cache and committed without waiting for the
// disk: its index names the boot it was written in. Within that boot the page cache holds
// exactly what was verified, so the entry is used as is; the install that clones from it
// calls Settle, which syncs it and drops the mark. An entry still marked with another boot
// may have lost data in a crash, so its first use hashes all of its data against the
// digests (a damaged one is removed) and settles it. Where the boot cannot be told,
// entries are synced at fetch, with O_DIRECT (filewriter.go).
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

// unsynced is an entry Members found marked with this boot: its index and tar as checked.
type unsynced struct{ idx, tar fs.FileInfo }

// Settle makes the cache entries with these sha256s durable, if this Cache found them
// written in this boot and not yet synced: one syncfs of the cache's filesystem, an fsync
// of each tar (which reports its write-back errors), then each index replaced by one without
// the boot, unless the entry changed meanwhile. An entry that another process removed or
// fetched again is skipped without error: a new copy is synced too or keeps its mark, to
// have all of its data checked at its first use after a reboot. One whose tar fails to
// sync is removed. With NoSync set, the marks are dropped without syncing anything.
func (c *Cache) Settle(shas ...string) error {
	var todo []string
	var was []unsynced
	for _, sha := range shas {
		if u, ok := c.unsettled.LoadAndDelete(sha); ok {
			todo, was = append(todo, sha), append(was, u.(unsynced))
		}
	}
	if len(todo) == 0 {
		return nil
	}
	var errs []error
	tmps := make([]string, len(todo))
	defer func() {
		for _, tmp := range tmps {
			if tmp != "" {
				os.Remove(tmp)
			}
		}
	}()
	for i, sha := range todo {
		var err error
		if tmps[i], err = c.settledIndex(sha, was[i].idx, false); err != nil && !errors.Is(err, errReplaced) {
			errs = append(errs, fmt.Errorf("fetch: settle cached %s: %w", sha, err))
		}
	}
	if err := c.syncFS(); err != nil {
		return errors.Join(append(errs, fmt.Errorf("fetch: settle cache: %w", err))...)
	}
	renamed := false
	for i, sha := range todo {
		if tmps[i] == "" {
			continue
		}
		if err := c.replaceIndex(sha, tmps[i], was[i]); err != nil {
			if !errors.Is(err, errReplaced) {
				errs = append(errs, fmt.Errorf("fetch: settle cached %s: %w", sha, err))
			}
			continue
		}
		tmps[i], renamed = "", true
	}
	if renamed {
		if err := c.fsync(c.tarsDir()); err != nil {
			errs = append(errs, fmt.Errorf("fetch: settle cache: %w", err))
		}
	}
	return errors.Join(errs...)
}

// settle makes durable the entry whose data Members has just checked: the same steps as
// Settle, for one entry, with fsyncs instead of a syncfs.
func (c *Cache) settle(sha string, was unsynced) error {
	tmp, err := c.settledIndex(sha, was.idx, !c.NoSync)
	if err != nil || tmp == "" {
		return err
	}
	defer os.Remove(tmp)
	if err := c.replaceIndex(sha, tmp, was); err != nil {
		return err
	}
	return c.fsync(c.tarsDir())
}

// replaceIndex fsyncs the entry's tar and renames tmp over its index, if both are still the
// files was describes; a tar that fails to sync is removed. If the tar changed under the
// rename, another process is fetching the entry again and the rename may have replaced its
// marked index: its tar's data, written before that index, are synced too.
func (c *Cache) replaceIndex(sha, tmp string, was unsynced) error {
	if err := c.unchanged(sha, was); err != nil {
		return err
	}
	if err := c.fsync(c.Path(sha)); err != nil {
		c.drop(sha, was.tar)
		return fmt.Errorf("%w; removed from the cache", err)
	}
	if err := os.Rename(tmp, c.idxPath(sha)); err != nil {
		return err
	}
	if tar, err := os.Stat(c.Path(sha)); err != nil || !os.SameFile(tar, was.tar) {
		return c.syncFS()
	}
	return nil
}

// fsync is durable.Path, unless c.NoSync is set.
func (c *Cache) fsync(path string) error {
	if c.NoSync {
		return nil
	}
	return durable.Path(path)
}

// syncFS flushes the cache's filesystem, unless c.NoSync is set.
func (c *Cache) syncFS() error {
	if c.NoSync {
		return nil
	}
	return durable.FS(c.tarsDir())
}

// unchanged reports an error unless the entry's index and tar are the files was describes.
func (c *Cache) unchanged(sha string, was unsynced) error {
	idx, err := os.Stat(c.idxPath(sha))
	if err != nil {
		return replaced(err)
	}
	tar, err := os.Stat(c.Path(sha))
	if err != nil {
		return replaced(err)
	}
	if !os.SameFile(idx, was.idx) || !os.SameFile(tar, was.tar) {
		return errReplaced
	}
	return nil
}

// settledIndex writes a temporary copy of the entry's index without its boot, synced if sync,
// and returns its path; "" if the index has no boot. The index read must be the file idx.
func (c *Cache) settledIndex(sha string, idx fs.FileInfo, sync bool) (string, error) {
	ix, err := openEntryIndex(c.idxPath(sha))
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
		if _, err := io.WriteString(w, entryHeader(ix.name, ix.version, "")); err != nil {
			return err
		}
		_, err := io.Copy(w, ix.rest())
		return err
	})
}
