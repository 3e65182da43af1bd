package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Several roots may install from one cache. Each records itself under roots/, one file per
// root named by a hash of its path and holding the path, so that pruning the cache from one
// root keeps what the others use.

// RootFile is where the cache records the root at the absolute path root.
func (c *Cache) RootFile(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(c.dir, "roots", hex.EncodeToString(sum[:8]))
}

// AddRoot records that the root at the absolute path root installs from the cache.
func (c *Cache) AddRoot(root string) error {
	path := c.RootFile(root)
	if b, err := os.ReadFile(path); err == nil && string(b) == root+"\n" {
		return nil
	}
	err := c.writeFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, root+"\n")
		return err
	})
	if err != nil {
		return fmt.Errorf("fetch: record root %s in the cache: %w", root, err)
	}
	return nil
}

// Roots returns the roots recorded as installing from the cache.
func (c *Cache) Roots() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(c.dir, "roots"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetch: list the roots of the cache: %w", err)
	}
	var roots []string
	for _, e := range ents {
		path := filepath.Join(c.dir, "roots", e.Name())
		b, err := os.ReadFile(path)
		if root := strings.TrimSuffix(string(b), "\n"); err == nil && filepath.IsAbs(root) && c.RootFile(root) == path {
			roots = append(roots, root)
		}
	}
	return roots, nil
}

// ForgetRoot drops the record of a root that no longer exists.
func (c *Cache) ForgetRoot(root string) error {
	if err := os.Remove(c.RootFile(root)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RunDir returns the cache's directory of run roots, <cache>/run, making it if needed; it
// refuses one that is a symlink or not a directory, as it does the other subdirectories.
func (c *Cache) RunDir() (string, error) {
	if err := subdir(c.use, c.dir, "run"); err != nil {
		return "", err
	}
	return filepath.Join(c.dir, "run"), nil
}
