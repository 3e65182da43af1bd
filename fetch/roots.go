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
	"sync"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
)

// Several roots may install from one cache. Each records itself under roots/, one file per
// root named by a hash of its path and holding the path, so that pruning the cache from one
// root keeps what the others use.

// RootFile is where the cache records the root at the absolute path root.
func (c *Cache) RootFile(root string) string { return filepath.Join(c.dir, "roots", rootName(root)) }

// rootName is the name, in roots/, of the record of the root at the absolute path root.
func rootName(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:8])
}

// AddRoot records that the root at the absolute path root installs from the cache. A run
// root is recorded by its path in the cache, also when given by the path through the
// cache's descriptor that RunDir returns.
func (c *Cache) AddRoot(root string) error {
	root = c.runs.name(root)
	name := rootName(root)
	if b, err := readFileAt(c.roots, name); err == nil && string(b) == root+"\n" {
		return nil
	}
	err := c.writeFile(c.roots, name, func(w io.Writer) error {
		_, err := io.WriteString(w, root+"\n")
		return err
	})
	if err != nil {
		return fmt.Errorf("record root %s in the cache: %w", root, err)
	}
	return nil
}

// maxRootRecord bounds a record of roots/ read: a path.
const maxRootRecord = 64 << 10 // 64 KiB

// readFileAt reads the record name of the directory d.
func readFileAt(d *os.File, name string) ([]byte, error) {
	f, err := dirfd.Open(d, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, maxRootRecord, f.Name(), "root record")
}

// Roots returns the roots recorded as installing from the cache.
func (c *Cache) Roots() ([]string, error) {
	names, err := readNames(c.roots)
	if err != nil {
		return nil, fmt.Errorf("list the roots of the cache: %w", err)
	}
	var roots []string
	for _, name := range names {
		b, err := readFileAt(c.roots, name)
		if root := strings.TrimSuffix(string(b), "\n"); err == nil && filepath.IsAbs(root) && rootName(root) == name {
			roots = append(roots, root)
		}
	}
	return roots, nil
}

// ForgetRoot drops the record of a root that no longer exists.
func (c *Cache) ForgetRoot(root string) error {
	if err := removeAt(c.roots, rootName(c.runs.name(root))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// runDir is the cache's directory of run roots, run/, once opened.
type runDir struct {
	mu   sync.Mutex
	f    *os.File
	path string // dirfd.Path(f)
	dir  string // its path in the cache
}

// name returns path, a path through the run directory's descriptor, as the path in the
// cache it stands for; any other path as it is.
func (r *runDir) name(path string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return path
	}
	if rest, ok := strings.CutPrefix(path, r.path+"/"); ok {
		return filepath.Join(r.dir, rest)
	}
	return path
}

// Runs is the cache's directory of run roots, <cache>/run, open: the cache's, until the
// cache is closed (RunDir).
type Runs struct {
	Dir *os.File
	// Path is a path to Dir through its descriptor (/proc/self/fd/N), which stays the
	// cache's directory whatever takes its name: a run root reached by it is the cache's
	// (AddRoot records it by its path in the cache).
	Path  string
	owner cacheOwner
}

// RunDir returns the cache's directory of run roots, making it if needed. It refuses one
// that is a symlink or not a directory, as it does the other subdirectories.
func (c *Cache) RunDir() (*Runs, error) {
	c.runs.mu.Lock()
	defer c.runs.mu.Unlock()
	if c.runs.f == nil {
		if err := subdir(c.use, c.dir, "run", c.owner); err != nil {
			return nil, err
		}
		f, err := c.openSubdir("run")
		if err != nil {
			return nil, err
		}
		c.runs.f, c.runs.path, c.runs.dir = f, dirfd.Path(f), f.Name()
	}
	return &Runs{Dir: c.runs.f, Path: c.runs.path, owner: c.owner}, nil
}

// Give hands the file name of r, and everything beneath it where it is a directory, to
// the cache's owner, as all root makes in a user's cache is (owner.go): a run root, its
// .used file, the memos. A name that is not there is nothing to hand over.
func (r *Runs) Give(name string) error {
	err := r.owner.giveAll(r.Dir, name)
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == inDir(r.Dir, name) && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// GiveFile hands the file f, open, to the cache's owner as Give does: the file itself,
// whatever its name now (a run root's .used file, held), never a file put in its place
// since it was opened.
func (r *Runs) GiveFile(f *os.File) error { return r.owner.give(int(f.Fd()), f.Name()) }

// OpenRunDir opens the directory of run roots of the cache at dir, through no symlink,
// without taking the cache's lock or making anything: for a run that reuses a run root
// and opens nothing else of the cache.
func OpenRunDir(dir string) (*os.File, error) { return openCacheSubdir(dir, "run") }

// openCacheSubdir opens the subdirectory name of the cache at dir, through no symlink,
// without opening the cache.
func openCacheSubdir(dir, name string) (*os.File, error) {
	use, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer use.Close()
	return dirfd.Open(use, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}
