package fetch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A fetched entry is written through the page cache and committed without waiting for the
// disk: its index names the boot it was written in. Within that boot the page cache holds
// exactly what was verified, so the entry is used as is; the install that clones from it
// calls Settle, which syncs it and drops the mark. An entry still marked with another boot
// may have lost data in a crash, so its first use hashes all of its data against the digests
// (a damaged one is removed) and settles it. Syncing 1 GiB at fetch made `pkg fetch` wait
// for the disk (bench/fetch.sh, zstd: 2.81 s synced with O_DIRECT, 2.38 s not synced;
// `curl | zstd -d` 2.23 s, in one run). Where the boot cannot be told, entries are synced
// at fetch.
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

// Settle makes the cache entries with these sha256s durable, if this Cache found them
// written in this boot and not yet synced: one syncfs of the cache's filesystem, then each
// index rewritten without its boot. An entry it cannot settle stays marked, to be checked
// entirely at its first use after a reboot.
func (c *Cache) Settle(shas ...string) error {
	var todo []string
	for _, sha := range shas {
		if _, ok := c.unsettled.LoadAndDelete(sha); ok {
			todo = append(todo, sha)
		}
	}
	if len(todo) == 0 {
		return nil
	}
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
		if tmps[i], err = c.settledIndex(sha); err != nil {
			return fmt.Errorf("fetch: settle cached %s: %w", sha, err)
		}
	}
	if err := syncFS(filepath.Join(c.dir, "tars")); err != nil {
		return fmt.Errorf("fetch: settle cache: %w", err)
	}
	for i, sha := range todo {
		if tmps[i] == "" {
			continue
		}
		if err := os.Rename(tmps[i], c.idxPath(sha)); err != nil {
			return fmt.Errorf("fetch: settle cached %s: %w", sha, err)
		}
		tmps[i] = ""
	}
	return syncDir(filepath.Join(c.dir, "tars"))
}

// settle makes one entry durable, as Settle does.
func (c *Cache) settle(sha string) error {
	tmp, err := c.settledIndex(sha)
	if err != nil || tmp == "" {
		return err
	}
	defer os.Remove(tmp)
	f, err := os.Open(c.Path(sha))
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	return c.rename(tmp, c.idxPath(sha))
}

// settledIndex writes, unsynced, a temporary copy of the entry's index without its boot,
// and returns its path; "" if the index has no boot.
func (c *Cache) settledIndex(sha string) (string, error) {
	data, err := os.ReadFile(c.idxPath(sha))
	if err != nil {
		return "", err
	}
	name, version, boot, rest, err := readEntryHeader(data)
	if err != nil || boot == "" {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), "idx-*")
	if err != nil {
		return "", err
	}
	_, err = fmt.Fprintf(f, "%s %s %s\n", entryMagic, name, version)
	if err == nil {
		_, err = f.Write(rest)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
