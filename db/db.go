// Package db records what is installed under a root: one record per package, the files each
// package owns, the intents of commits in progress, and the last signed index of each
// repository the root accepted. It stores them in a bbolt file whose lock is the install
// lock. It does not touch the installed trees.
package db

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Package is the record of one installed package.
type Package struct {
	Name      string    `json:"name"`
	Version   string    `json:"version"`
	SHA256    string    `json:"sha256"` // of the published archive
	Depends   []string  `json:"depends,omitempty"`
	Bin       []string  `json:"bin,omitempty"`
	Summary   string    `json:"summary,omitempty"`
	Installed time.Time `json:"installed"`
	Files     int       `json:"files"` // members that are not directories
	Size      int64     `json:"size"`  // bytes of regular files
}

// File is one path a package owns, relative to its package directory.
type File struct {
	Path   string
	Type   byte // tar type flag: '0' regular, '5' directory, '2' symlink, '1' hardlink
	Mode   fs.FileMode
	Size   int64
	SHA256 [32]byte // of a regular file's or a hardlink target's data, or of a symlink's target; zero for a directory
}

// Intent describes a commit in progress, written before its rename and deleted with the
// record it leads to, so that a start after a crash can undo it.
type Intent struct {
	Op      string `json:"op"`      // "install" or "remove"
	Name    string `json:"name"`    // package name
	Staging string `json:"staging"` // where the other tree is (staging dir or trash), relative to the root
	Inode   uint64 `json:"inode"`   // inode of the new tree's top directory (install)
}

// ErrNotInstalled is returned for a package that has no record.
var ErrNotInstalled = errors.New("db: package not installed")

var (
	pkgsBucket    = []byte("pkgs")
	filesBucket   = []byte("files")
	intentsBucket = []byte("intents")
)

// fileRecordSize is the encoded size of a File without its path: type, mode, size, sha256.
const fileRecordSize = 1 + 4 + 8 + 32

// DB is an open database. Only one process holds it at a time.
type DB struct {
	b     *bolt.DB
	owner string
}

// Options controls Open.
type Options struct {
	Timeout time.Duration       // how long to wait for another process's lock; 0 waits forever
	Waiting func(holder string) // called once if the lock is held, with what is known of the holder
	Owner   string              // describes this process to others that wait (for example its command line)
}

// lockRetry is how long a waiting Open sleeps between tries of the lock. bbolt's own Timeout
// gives up up to one of its retry intervals (50 ms) early, so Open keeps the deadline.
const lockRetry = 50 * time.Millisecond

// Open opens or creates the database at path, waiting for the lock of another process.
func Open(path string, o Options) (*DB, error) {
	deadline := time.Now().Add(o.Timeout)
	b, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: lockRetry}) // one try
	if errors.Is(err, bolt.ErrTimeout) && o.Waiting != nil {
		o.Waiting(readOwner(path))
	}
	for errors.Is(err, bolt.ErrTimeout) && (o.Timeout == 0 || time.Now().Before(deadline)) {
		wait := lockRetry
		if o.Timeout != 0 {
			wait = min(wait, time.Until(deadline))
		}
		time.Sleep(wait)
		b, err = bolt.Open(path, 0o644, &bolt.Options{Timeout: lockRetry})
	}
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("db: %s is locked by %s: gave up after %v", path, readOwner(path), o.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	d := &DB{b: b, owner: path + ".owner"}
	// Best effort: the owner file only helps a waiting process say whom it waits for.
	os.WriteFile(d.owner, []byte(ownerText(o.Owner)), 0o644)
	return d, nil
}

// buckets are created by the first write transaction, not at Open: on a new root that
// saves a transaction of its own, two fdatasyncs, and commands that only read never write.
var buckets = [][]byte{pkgsBucket, filesBucket, intentsBucket, reposBucket}

// get returns the value of key in the bucket name, nil if either is missing.
func get(tx *bolt.Tx, name, key []byte) []byte {
	if b := tx.Bucket(name); b != nil {
		return b.Get(key)
	}
	return nil
}

// forEach calls fn for each value of the bucket name, if it exists.
func forEach(tx *bolt.Tx, name []byte, fn func(v []byte) error) error {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	return b.ForEach(func(_, v []byte) error { return fn(v) })
}

func ownerText(desc string) string {
	s := "pid " + strconv.Itoa(os.Getpid())
	if desc != "" {
		s += " (" + desc + ")"
	}
	return s
}

func readOwner(path string) string {
	b, err := os.ReadFile(path + ".owner")
	if err != nil || len(b) == 0 {
		return "another pkg process"
	}
	return strings.TrimSpace(string(b))
}

// Close releases the database and its lock.
func (d *DB) Close() error {
	os.Remove(d.owner)
	return d.b.Close()
}

// Check runs bbolt's consistency check and returns its first error.
func (d *DB) Check() error {
	return d.b.View(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() { // drain: the checker reads the tx until it closes the channel
			if first == nil {
				first = err
			}
		}
		return first
	})
}

// Get returns the record of an installed package, or ErrNotInstalled.
func (d *DB) Get(name string) (*Package, error) {
	var p *Package
	err := d.b.View(func(tx *bolt.Tx) error {
		v := get(tx, pkgsBucket, []byte(name))
		if v == nil {
			return fmt.Errorf("%w: %s", ErrNotInstalled, name)
		}
		p = new(Package)
		return json.Unmarshal(v, p)
	})
	return p, err
}

// List returns every installed package, sorted by name.
func (d *DB) List() ([]Package, error) {
	var ps []Package
	err := d.b.View(func(tx *bolt.Tx) error {
		return forEach(tx, pkgsBucket, func(v []byte) error {
			var p Package
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			ps = append(ps, p)
			return nil
		})
	})
	return ps, err
}

// Files returns the files of an installed package, sorted by path.
func (d *DB) Files(name string) ([]File, error) {
	var files []File
	err := d.b.View(func(tx *bolt.Tx) error {
		v := get(tx, filesBucket, []byte(name))
		if v == nil {
			return fmt.Errorf("%w: %s", ErrNotInstalled, name)
		}
		var err error
		files, err = decodeFiles(v)
		if err != nil {
			return fmt.Errorf("db: files of %s: %w", name, err)
		}
		return nil
	})
	return files, err
}

// Intents returns the pending intents.
func (d *DB) Intents() ([]Intent, error) {
	var ins []Intent
	err := d.b.View(func(tx *bolt.Tx) error {
		return forEach(tx, intentsBucket, func(v []byte) error {
			var in Intent
			err := json.Unmarshal(v, &in)
			ins = append(ins, in)
			return err
		})
	})
	return ins, err
}

// ClearIntent deletes the intent of a package without changing its record.
func (d *DB) ClearIntent(name string) error {
	return d.update("clear intent for "+name, func(tx *bolt.Tx) error {
		return tx.Bucket(intentsBucket).Delete([]byte(name))
	})
}

// SetIntents records intents in one transaction, each replacing any earlier one for the
// same package.
func (d *DB) SetIntents(ins []Intent) error {
	vs := make([][]byte, len(ins))
	for i, in := range ins {
		v, err := json.Marshal(in)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	return d.update(fmt.Sprintf("record %d intents", len(ins)), func(tx *bolt.Tx) error {
		for i, in := range ins {
			if err := tx.Bucket(intentsBucket).Put([]byte(in.Name), vs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Commit records packages with their files and deletes the packages named in remove, and
// the intents of all of them, in one transaction: files[i] are those of ps[i].
func (d *DB) Commit(ps []*Package, files [][]File, remove []string) error {
	vs := make([][]byte, len(ps))
	for i, p := range ps {
		v, err := json.Marshal(p)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	what := fmt.Sprintf("record %d packages", len(ps))
	if len(remove) > 0 {
		what += fmt.Sprintf(" and delete %d", len(remove))
	}
	return d.update(what, func(tx *bolt.Tx) error {
		for _, name := range remove {
			for _, b := range [][]byte{filesBucket, pkgsBucket, intentsBucket} {
				if err := tx.Bucket(b).Delete([]byte(name)); err != nil {
					return err
				}
			}
		}
		for i, p := range ps {
			if err := tx.Bucket(filesBucket).Put([]byte(p.Name), encodeFiles(files[i])); err != nil {
				return err
			}
			if err := tx.Bucket(pkgsBucket).Put([]byte(p.Name), vs[i]); err != nil {
				return err
			}
			if err := tx.Bucket(intentsBucket).Delete([]byte(p.Name)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (d *DB) update(what string, fn func(tx *bolt.Tx) error) error {
	err := d.b.Update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("db: %s: %w", what, err)
	}
	return nil
}

// encodeFiles packs a file list, sorted by path, into one value: for each file its path length
// (uvarint), path, type, mode, size and sha256. One value per package keeps a commit of 80,000 files
// to one Put.
func encodeFiles(files []File) []byte {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	n := 0
	for _, f := range sorted {
		n += binary.MaxVarintLen64 + len(f.Path) + fileRecordSize
	}
	v := make([]byte, 0, n)
	for _, f := range sorted {
		v = binary.AppendUvarint(v, uint64(len(f.Path)))
		v = append(v, f.Path...)
		v = append(v, f.Type)
		v = binary.BigEndian.AppendUint32(v, uint32(f.Mode))
		v = binary.BigEndian.AppendUint64(v, uint64(f.Size))
		v = append(v, f.SHA256[:]...)
	}
	return v
}

func decodeFiles(v []byte) ([]File, error) {
	var files []File
	for len(v) > 0 {
		n, k := binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < n+fileRecordSize {
			return nil, errors.New("truncated file record")
		}
		v = v[k:]
		rec := v[n:]
		files = append(files, File{
			Path:   string(v[:n]),
			Type:   rec[0],
			Mode:   fs.FileMode(binary.BigEndian.Uint32(rec[1:])),
			Size:   int64(binary.BigEndian.Uint64(rec[5:])),
			SHA256: [32]byte(rec[13:45]),
		})
		v = rec[fileRecordSize:]
	}
	return files, nil
}
