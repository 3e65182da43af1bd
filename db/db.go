// Package db records what is installed under a root: one record per package, the files each
// package owns, the owners of each path of the root's merged prefix and the roll-forward of
// it a commit still owes, which packages the user asked for, the intents of commits in progress, the
// last signed index of each repository the root accepted, with the keys that verified it,
// and the standing conditions the user was told of. It stores them in a bbolt file. It
// does not touch the installed trees.
package db

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/repo"
)

// Record is the record of one installed package.
type Record struct {
	Name      string             `json:"name"`
	Version   string             `json:"version"`
	Kind      string             `json:"kind,omitempty"`     // as repo.Package's
	SHA256    string             `json:"sha256"`             // of the published archive
	Depends   []repo.Requirement `json:"depends,omitempty"`  // as the index had them, written as text
	Optional  []repo.Requirement `json:"optional,omitempty"` // as repo.Package's
	Peers     []repo.Requirement `json:"peers,omitempty"`    // as repo.Package's
	Bin       []repo.Command     `json:"bin,omitempty"`
	Lib       []string           `json:"lib,omitempty"` // directories of shared libraries, relative to the package directory
	Summary   string             `json:"summary,omitempty"`
	Installed time.Time          `json:"installed"`
	Files     int                `json:"files"` // members that are not directories
	Size      int64              `json:"size"`  // bytes of regular files
	// Origin is the local archive file the package was installed from (pkg install
	// ./FILE), an absolute path; "" for a repository's package.
	Origin    string             `json:"origin,omitempty"`
	Provides  []repo.Requirement `json:"provides,omitempty"`  // as repo.Package's
	Conflicts []repo.Requirement `json:"conflicts,omitempty"` // as repo.Package's
	Replaces  []repo.Requirement `json:"replaces,omitempty"`  // packages whose files it may take over in the prefix
	Into      string             `json:"into,omitempty"`      // where its first path component is placed in the prefix
	Env       []string           `json:"env,omitempty"`       // NAME=VALUE its commands run with, as the index had them
	// Folded are the member directories moved whole into the prefix (folded), sorted:
	// each is at its prefix path, an empty placeholder left at its place in the tree.
	Folded []string `json:"folded,omitempty"`
	// Bare says a repair recorded the package from its tree and the cache's entry alone,
	// with no index entry or earlier record to describe it: its dependencies, commands,
	// libraries and other relations are unknown (not none) until it is installed again
	// from an entry that has them. Absent, in a record written before it was, is false.
	Bare bool `json:"bare,omitempty"`
}

// clone returns r with slices of its own, theirs too, so that a caller of List may change
// them.
func (r Record) clone() Record {
	for _, s := range []*[]repo.Requirement{&r.Depends, &r.Optional, &r.Peers, &r.Provides, &r.Conflicts, &r.Replaces} {
		*s = cloneRequirements(*s)
	}
	r.Bin = slices.Clone(r.Bin)
	r.Lib, r.Env, r.Folded = slices.Clone(r.Lib), slices.Clone(r.Env), slices.Clone(r.Folded)
	return r
}

// cloneRequirements returns rs with slices of its own, down to each constraint.
func cloneRequirements(rs []repo.Requirement) []repo.Requirement {
	rs = slices.Clone(rs)
	for i := range rs {
		rs[i].Constraints = slices.Clone(rs[i].Constraints)
		rs[i].Or = cloneRequirements(rs[i].Or)
	}
	return rs
}

// Key returns the instance key of the package r records, as repo.Package.Key.
func (r *Record) Key() string { return repo.InstanceKey(r.Kind, r.Name, r.Version) }

// InRoot returns where the root presents the package's member path (its prefix path,
// design.md, The merged prefix): the path itself, or with Into, the path with its first
// component replaced by Into (npm's package/index.js at
// lib/node_modules/.pnpm/ms@2.1.3/node_modules/ms/index.js).
func (r *Record) InRoot(member string) string {
	if r.Into == "" {
		return member
	}
	if _, rest, ok := strings.Cut(member, "/"); ok {
		return r.Into + "/" + rest
	}
	return r.Into
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
	Name    string `json:"name"`    // the package's key (Record.Key)
	Staging string `json:"staging"` // where the other tree is (staging dir or trash), relative to the root
	Inode   uint64 `json:"inode"`   // inode of the new tree's top directory (install)
	// Inode of the installed tree an install replaces, 0 if none: where it is still in
	// pkgs/, nothing was swapped.
	OldInode uint64 `json:"old_inode,omitempty"`
}

// ErrNotInstalled is returned for a package that has no record.
var ErrNotInstalled = errors.New("db: package not installed")

var (
	pkgsBucket    = []byte("pkgs")
	filesBucket   = []byte("files")
	intentsBucket = []byte("intents")
)

// DB is a database file. It is opened for each write transaction and closed after it, so
// other processes can read it between the transactions of a command that changes the root;
// with Options.Hold, one read-only opening serves the reads between two writes. Whoever
// writes it must hold the root's lock (package install).
type DB struct {
	path      string
	dir       *os.File        // Options.Dir, or nil
	ctx       context.Context // Options.Context, or nil
	timeout   time.Duration
	created   bool // by Open
	fresh     bool // made by create, at its temporary name until a write makes it durable (adopt); d.mu is held
	sealed    bool // made by create sealed (sealedDatabase), so that its first write syncs once (seal); d.mu is held
	unchecked bool // Options.Unchecked
	noCreate  bool // Options.NoCreate: without the root's lock, so it never adopts

	mu     sync.Mutex // held by each transaction
	hold   bool       // Options.Hold, until Release
	reader *bolt.DB   // open since the last write, if hold: read-only, or that write's (kept)
	kept   bool       // reader is the last write's handle, its lock made shared (keep)

	// tidied, once a commit made intent names void, is closed when they are removed, which
	// each use of intentDir and Release wait for (CommitRequested, waitTidied): a channel
	// read atomically, where a WaitGroup's Add would race a Wait of another method.
	tidied atomic.Pointer[chan struct{}]

	file      *os.File     // the last bbolt opened, for advance; d.mu is held
	allocated atomic.Int64 // size up to which this DB gave the file its blocks
	collected atomic.Bool  // whether a write transaction has collected the chunks of lists never committed

	// doneID is the stamp whose marker finished last found, doneAt that marker's time; d.mu is held.
	doneID   uint64
	doneAt   time.Time
	unmark   uint64 // the stamp whose marker the current write transaction finished for, to remove once committed
	unmarked uint64 // the last stamp whose marker this DB removed once its finish committed

	fsOnce sync.Once
	fs     durable.Files // of the file's filesystem (files)

	listed listMemo    // the last decoding of reader's records, List's or its commit's (prime); d.mu is held
	primed *primedList // the records the write transaction under way leaves, decoding beside its commit; d.mu is held

	said       map[string]string // what PutSaid left for the next summed write transaction (prepare) or Release; d.mu is held
	commitSaid map[string]string // what PutSaidWithCommit left for the next CommitRequested alone; d.mu is held
}

// primedList is the records a write transaction left, decoded on a goroutine while bbolt
// writes and syncs them (prime), for the memo of the reader it keeps.
type primedList struct {
	id   int
	done chan struct{}
	recs []Record
	err  error
}

// listMemo is the records a held reader's transaction id read, before stamping.
type listMemo struct {
	db   *bolt.DB
	id   int
	recs []Record // the Lists that read them return clones
}

// Created reports whether Open created the database.
func (d *DB) Created() bool { return d.created }

// Options controls Open.
type Options struct {
	Timeout  time.Duration // how long a transaction waits for another process's; 0 waits forever
	NoCreate bool          // fail with fs.ErrNotExist rather than create: for readers without the root's lock
	// Hold keeps the file open read-only from one read to the next write, or to Release,
	// rather than open it for each read (a dozen times in an install): for the holder of
	// the root's lock, as no other process writes meanwhile. Its shared lock lets other
	// processes read.
	Hold bool
	// Dir, when not nil, is the directory holding the file: the file is then reached from
	// it by its base name, through no symlink, and path only names it in messages, so that
	// a directory on the way swapped for a symlink while the DB is open leads nowhere else.
	Dir *os.File
	// Unchecked reads a file that fails the check against its sum file (a *DamagedError
	// of ErrStale, say): for a repair, which takes nothing it reads on trust.
	Unchecked bool
	// Context, when not nil, ends a wait for another process's transaction once it is
	// done, with its error: the DB lives as long as the command that opened it.
	Context context.Context
}

// Open returns the database at path, creating it if it does not exist.
func Open(path string, o Options) (*DB, error) {
	d := &DB{path: path, dir: o.Dir, ctx: o.Context, timeout: o.Timeout, hold: o.Hold, unchecked: o.Unchecked, noCreate: o.NoCreate}
	_, err := d.size(path)
	if errors.Is(err, fs.ErrNotExist) && d.holdsCommit() {
		// A new root's database whose link a crash took, not its records: a commit that
		// relied on them made its name and its pages durable.
		d.fresh = true
		if o.NoCreate {
			return d, nil // read where it is
		}
		if err := d.settle(); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		return d, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if o.NoCreate {
			return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
		}
		if err := d.create(); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		d.created = true
	} else if err == nil && !o.NoCreate {
		d.dropStray()
	}
	return d, nil
}

// dropStray removes the file create makes (path.new) found beside the database at d.path,
// unless it holds a commit and is another file: create makes it only where no database
// is at d.path, so it is adopt's own link, cut short before its removal, or an empty
// database never adopted (one a repair put a database in the place of, or one that an
// older pkg's repair left so): clutter in .pkg/ that nothing reads. The caller holds the
// root's lock. Best effort and unsynced: a crash that brings it back leaves it for the next
// Open.
func (d *DB) dropStray() {
	tmp := d.path + ".new"
	a, err := d.stat(tmp)
	if err != nil {
		return
	}
	if b, err := d.stat(d.path); err == nil && (a.Dev != b.Dev || a.Ino != b.Ino) && d.holdsCommit() {
		return
	}
	d.remove(tmp)
}

// initialSize is the size a database file is created with, its blocks allocated. bbolt
// grows a file with an ftruncate and an fsync each time its pages pass the end; at this
// size a root's first install of a few hundred files pays none (docs/history.md). One of
// thousands still grows the file, as it should where it may not fit: a commit that needs
// space the filesystem has not failed at its write (test/crash TestENOSPC).
const initialSize = 128 << 10

// writeMmapSize is the least mapping of the file a write transaction opens with
// (bolt.Options.InitialMmapSize): a commit whose pages pass the mapping's end has bbolt map
// the file again, each time copying every node the commit changed out of the old mapping
// first (the npm tree's commit of 229 packages: 1.6 MB copied). Address space only: the
// file keeps its size, and bbolt reads no page past its end.
const writeMmapSize = 32 << 20 // 32 MiB

// create makes an empty database under a temporary name, unsynced, which d reads and
// writes until its first write transaction made it durable and adopt links it to d.path
// (or Release, syncing it first, where none came): so a creation cut short, by a crash or
// a full disk, leaves no partial database, and a new root's first commit syncs the file
// once, with its first transaction. Where its blocks are allocated on a filesystem that
// tracks a file's data (durable.Files.Tracks: XFS, ext4 with its journal, btrfs), it is
// made sealed, so that that transaction takes one fdatasync rather than bbolt's two
// (seal). The caller holds the root's lock, so the temporary name is its own.
func (d *DB) create() error {
	tmp := d.path + ".new"
	if err := d.remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := d.openFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	// Allocated while empty: XFS writes back and waits for the pages below the size that a
	// fallocate raises (xfs_setattr_size), which would be the empty database's, just written.
	sealed := false
	if unix.Fallocate(int(f.Fd()), 0, 0, initialSize) == nil { // else bbolt grows it
		d.allocated.Store(initialSize)
		sealed = d.files().Tracks()
	}
	if sealed {
		_, err = f.WriteAt(sealedDatabase(), int64(os.Getpagesize()))
	} else {
		_, err = f.WriteAt(emptyDatabase(), 0)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = d.remove(d.path + ".sum"); errors.Is(err, fs.ErrNotExist) { // an earlier database's
			err = nil
		}
	}
	if err != nil {
		d.remove(tmp)
		return err
	}
	d.fresh, d.sealed = true, sealed
	return nil
}

// adopt links the database create made to d.path, once durable: a write transaction's
// fdatasyncs wrote its pages and its size. Where durable.Files.Tracks (XFS, ext4 with a
// journal, btrfs), the link needs no directory fsync of its own: what makes the commit's
// renames durable makes every name made before them durable too (the journal forced up to
// them; btrfs's transaction commit). Where the first write came before the renames (its
// intents' transaction), the link is such a name; where it is the commit's records
// (intents kept as names), the temporary name is, and a crash that takes the link leaves
// it holding the commit, which Open then takes (holdsCommit). Until then a lost link loses
// a database that records nothing done. d.mu is held.
func (d *DB) adopt() error {
	tmp := d.path + ".new"
	if err := d.link(tmp, d.path); err != nil {
		return err
	}
	d.fresh = false
	d.remove(tmp)
	if d.files().Tracks() {
		return nil
	}
	if d.dir != nil {
		return d.dir.Sync()
	}
	return durable.Path(filepath.Dir(d.path))
}

// holdsCommit reports whether the file create makes is there, whole, holding a commit:
// bbolt's empty database is at its transaction 1. A sealed file's first commit
// (transaction 2) counts only where its seal is the sum of its pages (seal).
func (d *DB) holdsCommit() bool {
	name := d.path + ".new"
	if _, err := d.size(name); err != nil {
		return false
	}
	var id int
	err := d.protect(func() error {
		b, err := bolt.Open(name, 0o644, &bolt.Options{Timeout: lockPoll, ReadOnly: true,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := d.openWhole(name, flag, perm)
				if err == nil && !sealHolds(f) {
					f.Close()
					return nil, errUnsealed
				}
				return f, err
			}})
		if err != nil {
			return err
		}
		defer b.Close()
		return b.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	})
	return err == nil && id >= 2
}

// errUnsealed is holdsCommit's refusal of a sealed file whose seal does not hold.
var errUnsealed = errors.New("db: the first commit's seal is not the sum of its pages")

// settle adopts a database that create made and no write transaction followed: synced
// first (or one holdsCommit found), unless d is a reader's (Options.NoCreate), which
// leaves the link to the holder of the root's lock. A sealed one is written whole first,
// as emptyDatabase, since the commit that may come next will not seal it. d.mu is held.
func (d *DB) settle() error {
	if !d.fresh || d.noCreate {
		return nil
	}
	flag := os.O_RDONLY
	if d.sealed {
		flag = os.O_RDWR
	}
	f, err := d.openFile(d.path+".new", flag, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if d.sealed {
		if _, err := f.WriteAt(emptyDatabase(), 0); err != nil {
			return err
		}
		d.sealed = false
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return d.adopt()
}

// sealFlag marks the meta page of a sealed database (sealedDatabase) in its flags, which
// bbolt copies from each transaction's meta page into the next's and never reads.
const sealFlag = 0x5345414c // "SEAL"

// sealedDatabase returns emptyDatabase but its first page, the meta page of transaction 1
// flagged sealFlag. create writes it from the second page on, into blocks allocated and
// never written: the first page, where bbolt writes the meta page of the first commit
// (transaction 2), reads as zeros until a write there is on the disk, and bbolt takes
// transaction 1's meta page meanwhile.
func sealedDatabase() []byte {
	size := os.Getpagesize()
	b := emptyDatabase()[size:]
	binary.NativeEndian.PutUint32(b[metaFlagsAt:], sealFlag)
	m := b[pageHeaderSize:]
	binary.NativeEndian.PutUint64(m[metaSize-8:], metaSum(m))
	return b
}

// A bbolt page starts with a header (id uint64, flags uint16, count uint16, overflow
// uint32; pageHeaderSize); a meta page's body, of metaSize bytes, with the magic
// (metaMagic), the version and the page size (uint32 each) first, ends with its checksum
// (metaSum).
const metaSize = 64

// metaSum returns the checksum of the meta page body m: FNV-1a of all but its last 8 bytes.
func metaSum(m []byte) uint64 {
	h := fnv.New64a()
	h.Write(m[:metaSize-8])
	return h.Sum64()
}

// emptyDatabase returns the bytes bbolt writes into an empty file at its first open (its
// DB.init): the meta pages of transactions 0 and 1, an empty freelist and an empty root
// leaf, at the system's page size. create writes them, to be synced once with the file's
// size, without opening bbolt; TestEmptyDatabase holds them to what bbolt writes.
func emptyDatabase() []byte {
	const (
		leafPage     = 0x02
		metaPage     = 0x04
		freelistPage = 0x10
		version      = 2
	)
	size := os.Getpagesize()
	b := make([]byte, 4*size)
	ne := binary.NativeEndian
	for i, flags := range []uint16{metaPage, metaPage, freelistPage, leafPage} {
		p := b[i*size:]
		ne.PutUint64(p, uint64(i))
		ne.PutUint16(p[8:], flags)
		if flags != metaPage {
			continue
		}
		m := p[pageHeaderSize:]
		ne.PutUint32(m, metaMagic)
		ne.PutUint32(m[4:], version)
		ne.PutUint32(m[8:], uint32(size))
		ne.PutUint64(m[16:], 3) // the root bucket's page; its sequence, m[24:], is 0
		ne.PutUint64(m[32:], 2) // the freelist's page
		ne.PutUint64(m[40:], 4) // the high water mark
		ne.PutUint64(m[48:], uint64(i))
		ne.PutUint64(m[metaSize-8:], metaSum(m))
	}
	return b
}

// open opens the file for one transaction, waiting for other processes' transactions:
// bbolt locks it shared for reading and exclusively for writing. It refuses a file that
// is damaged or older than its last commit (check) with a *DamagedError.
func (d *DB) open(readOnly bool) (*bolt.DB, error) {
	var (
		b *bolt.DB
		f *os.File // b's, which the sums read too
	)
	err := d.waitLock(func() error {
		return d.protect(func() (err error) {
			// The free pages, which the check leaves out, are read at once: bbolt reads
			// them for a write anyway.
			name := d.path
			if d.fresh {
				name += ".new"
			}
			o := &bolt.Options{Timeout: lockPoll, ReadOnly: readOnly, PreLoadFreelist: true,
				OpenFile: func(name string, flag int, perm os.FileMode) (_ *os.File, err error) {
					f, err = d.openWhole(name, flag, perm)
					return f, err
				}}
			if !readOnly {
				o.InitialMmapSize = writeMmapSize
			}
			b, err = bolt.Open(name, 0o644, o)
			return err
		})
	})
	if err != nil && f != nil {
		f.Close() // a panic recovered in bolt.Open left it open, with its lock
	}
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return nil, &BusyError{Path: d.path, Waited: d.timeout}
	case errors.Is(err, errInterrupted):
		return nil, fmt.Errorf("wait for %s: %w", d.path, d.ctx.Err())
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
		return nil, d.damaged(err)
	case errors.As(err, new(*DamagedError)):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", d.path, err)
	}
	// Damage first: a damaged mark may read as any format, and a damaged database is the
	// repair's to replace, where a newer one is a newer pkg's to read.
	if err := d.check(b, f); err != nil && !d.unchecked {
		b.Close()
		return nil, err
	}
	if err := d.checkFormat(b); err != nil {
		b.Close()
		return nil, err
	}
	d.file = f
	return b, nil
}

// lockPoll is how often a wait for another process's transaction tries bbolt's lock
// again: bbolt's own wait (a Timeout of 0 or longer than this) cannot be interrupted, and
// an interrupt must end a command at any point (#30).
const lockPoll = 50 * time.Millisecond

// BusyError is returned by a transaction that waited Options.Timeout for another
// process's and gave up.
type BusyError struct {
	Path   string // the database file
	Waited time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is busy in another process: gave up after %v", e.Path, e.Waited)
}

// errInterrupted is waitLock's error where Options.Context ended the wait.
var errInterrupted = errors.New("db: wait interrupted")

// waitLock calls try, which opens the file with bbolt's lock tried once (Timeout:
// lockPoll), every lockPoll while it fails with bolt.ErrTimeout, until Options.Timeout
// has passed (bolt.ErrTimeout) or Options.Context is done (errInterrupted).
func (d *DB) waitLock(try func() error) error {
	var deadline <-chan time.Time
	if d.timeout > 0 {
		t := time.NewTimer(d.timeout)
		defer t.Stop()
		deadline = t.C
	}
	var done <-chan struct{}
	if d.ctx != nil {
		done = d.ctx.Done()
	}
	for {
		err := try()
		if !errors.Is(err, bolt.ErrTimeout) {
			return err
		}
		select {
		case <-deadline:
			return err
		case <-done:
			return errInterrupted
		case <-time.After(lockPoll):
		}
	}
}

// openWhole opens the database file for bbolt (openFile), refusing an empty one: pkg never
// makes one (create links a whole file), and bbolt would make it a new, empty database. A
// FIFO in its place is refused too, not waited on (O_NONBLOCK, which a regular file ignores).
func (d *DB) openWhole(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := d.openFile(name, flag|unix.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	switch {
	case err == nil && !info.Mode().IsRegular():
		err = d.damaged(errNotRegular)
	case err == nil && info.Size() == 0:
		err = d.damaged(errEmpty)
	case err == nil && cutShort(f, info.Size()):
		err = d.damaged(errShort)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// cutShort reports whether f, a database file of size bytes, holds less than its two meta
// pages, which bbolt refuses with an error of no type ("file size too small"): pages of the
// size its first meta page records where that page is whole, else of the system's, as
// bbolt takes them.
func cutShort(f *os.File, size int64) bool {
	page := int64(os.Getpagesize())
	var p [pageHeaderSize + metaSize]byte
	ne := binary.NativeEndian
	if n, _ := f.ReadAt(p[:], 0); n == len(p) {
		if m := p[pageHeaderSize:]; ne.Uint32(m) == metaMagic && ne.Uint64(m[metaSize-8:]) == metaSum(m) {
			page = int64(ne.Uint32(m[8:]))
		}
	}
	return size < 2*page
}

// openFile opens the database file name (d.path, or its temporary name), failing (ELOOP)
// where a symlink is in its place: whoever may write the root must not have pkg write a
// file elsewhere. With Options.Dir, it is reached from that directory.
func (d *DB) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if d.dir == nil {
		return os.OpenFile(name, flag|unix.O_NOFOLLOW, perm)
	}
	fd, err := unix.Openat(int(d.dir.Fd()), filepath.Base(name), flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// size returns the size of the database file name.
func (d *DB) size(name string) (int64, error) {
	st, err := d.stat(name)
	return st.Size, err
}

// stat returns the status of the database file name: in d.dir, where d has it, without
// following a symlink.
func (d *DB) stat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	var err error
	if d.dir == nil {
		err = unix.Stat(name, &st)
	} else {
		err = unix.Fstatat(int(d.dir.Fd()), filepath.Base(name), &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return st, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return st, nil
}

// remove removes the database file name.
func (d *DB) remove(name string) error {
	if d.dir == nil {
		return os.Remove(name)
	}
	if err := unix.Unlinkat(int(d.dir.Fd()), filepath.Base(name), 0); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// link links the database file old to name.
func (d *DB) link(old, name string) error {
	if d.dir == nil {
		return os.Link(old, name)
	}
	fd := int(d.dir.Fd())
	if err := unix.Linkat(fd, filepath.Base(old), fd, filepath.Base(name), 0); err != nil {
		return &os.LinkError{Op: "link", Old: old, New: name, Err: err}
	}
	return nil
}

// view runs fn in a read transaction.
func (d *DB) view(fn func(tx *bolt.Tx) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.hold {
		b, err := d.open(true)
		if err != nil {
			return err
		}
		defer b.Close()
		return d.protect(func() error { return b.View(fn) })
	}
	if d.reader == nil {
		b, err := d.open(true)
		if err != nil {
			return err
		}
		d.reader = b
	}
	err := d.protect(func() error { return d.reader.View(fn) })
	if _, ok := errors.AsType[*DamagedError](err); ok { // no reflection: every read that finds no key passes here
		d.dropReader()
	}
	return err
}

// Release closes the file held open for reads (Options.Hold), and has each later read open
// it again: before the root's lock is given up, and before the file is removed. What
// PutSaid left for a write is recorded, and a database Open created and nothing wrote
// since is made durable and given its name first.
func (d *DB) Release() error {
	d.waitTidied()
	d.mu.Lock()
	later := len(d.said) > 0
	d.mu.Unlock()
	if later {
		// What was said that no write recorded: a failure only has it said again.
		d.update("record what was said", func(*bolt.Tx) error { return nil })
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold, d.said, d.commitSaid = false, nil, nil
	return errors.Join(d.dropReader(), d.settle())
}

// dropReader closes the reader, if open; d.mu is held. The write transactions' exclusive
// lock would wait for its shared one, in this process too.
func (d *DB) dropReader() error {
	if d.reader == nil {
		return nil
	}
	err := d.reader.Close()
	d.reader, d.kept, d.listed = nil, false, listMemo{} // the memo would keep the closed file's records
	return err
}

// buckets are created by the first write transaction, not at Open: on a new root that
// saves a transaction of its own, two fdatasyncs, and commands that only read never write.
var buckets = [][]byte{pkgsBucket, filesBucket, intentsBucket, reposBucket, requestedBucket, saidBucket, chunksBucket, listsBucket, aheadBucket, pathsBucket, prefixBucket, journalBucket, metaBucket}

// get returns the value of key in the bucket name, nil if either is missing.
func get(tx *bolt.Tx, name, key []byte) []byte {
	if b := tx.Bucket(name); b != nil {
		return b.Get(key)
	}
	return nil
}

// forEach calls fn for each value of the bucket name, if it exists.
func forEach(tx *bolt.Tx, name []byte, fn func(k, v []byte) error) error {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	return b.ForEach(fn)
}

// Check runs bbolt's consistency check and returns its first error.
func (d *DB) Check() error {
	return d.view(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() { // drain: the checker reads the tx until it closes the channel
			if first == nil {
				first = err
			}
		}
		return first
	})
}

// Get returns the record of the installed package key (Record.Key), or ErrNotInstalled.
func (d *DB) Get(name string) (*Record, error) {
	var p *Record
	err := d.view(func(tx *bolt.Tx) error {
		v := get(tx, pkgsBucket, []byte(name))
		if v == nil {
			return fmt.Errorf("%w: %s", ErrNotInstalled, name)
		}
		p = new(Record)
		if err := json.Unmarshal(v, p); err != nil {
			return err
		}
		s, at := d.finished(tx)
		s.stamped(p, at)
		return nil
	})
	return p, err
}

// List returns every installed package, sorted by key (Record.Key).
func (d *DB) List() ([]Record, error) {
	var ps []Record
	err := d.view(func(tx *bolt.Tx) error {
		recs, err := d.decoded(tx)
		if err != nil {
			return err
		}
		ps = make([]Record, len(recs))
		s, at := d.finished(tx)
		for i, r := range recs {
			ps[i] = r.clone()
			s.stamped(&ps[i], at)
		}
		return nil
	})
	return ps, err
}

// decoded returns the records tx holds, unstamped, decoded once for each transaction id of
// a held file (Options.Hold): an install lists its root half a dozen times, each a decoding
// of every record's JSON. Every write commits a new transaction id, and a held file is not
// written by another process, so what is read at an id stays what is there. d.mu is held.
func (d *DB) decoded(tx *bolt.Tx) ([]Record, error) {
	if m := &d.listed; m.db == tx.DB() && m.id == tx.ID() {
		return m.recs, nil
	}
	var raw [][]byte
	forEach(tx, pkgsBucket, func(_, v []byte) error { raw = append(raw, v); return nil })
	recs, err := decodeRecords(raw)
	if err != nil {
		return nil, err
	}
	if tx.DB() == d.reader {
		d.listed = listMemo{db: tx.DB(), id: tx.ID(), recs: recs}
	}
	return recs, nil
}

// decodeRecords decodes the records of the pkgs bucket, its values raw in key order.
func decodeRecords(raw [][]byte) ([]Record, error) {
	recs := make([]Record, len(raw))
	for i, v := range raw {
		if err := json.Unmarshal(v, &recs[i]); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// prime starts decoding the records the write transaction tx leaves, its last step, so
// that the List after its commit, the roll-forward's, finds them decoded: the decoding
// runs while bbolt writes and syncs the pages (write, which memoizes them). Nothing where
// d does not hold its file, whose reader write does not keep. d.mu is held.
func (d *DB) prime(tx *bolt.Tx) {
	if !d.hold {
		return
	}
	var raw [][]byte
	forEach(tx, pkgsBucket, func(_, v []byte) error { raw = append(raw, slices.Clone(v)); return nil })
	p := &primedList{id: tx.ID(), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.recs, p.err = decodeRecords(raw)
	}()
	d.primed = p
}

// Installed returns, from one transaction, the records of the packages names (keys:
// Record.Key), or of every installed package when names is empty, sorted by key, each with
// its files sorted by path; ErrNotInstalled for a key that has no record.
func (d *DB) Installed(names ...string) ([]Record, [][]File, error) {
	names = slices.Sorted(slices.Values(names))
	var ps []Record
	var files [][]File
	err := d.view(func(tx *bolt.Tx) error {
		if len(names) == 0 {
			forEach(tx, pkgsBucket, func(k, _ []byte) error { names = append(names, string(k)); return nil })
		}
		s, at := d.finished(tx)
		for _, name := range names {
			v, fv := get(tx, pkgsBucket, []byte(name)), get(tx, filesBucket, []byte(name))
			if v == nil || fv == nil {
				return fmt.Errorf("%w: %s", ErrNotInstalled, name)
			}
			var p Record
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			s.stamped(&p, at)
			fs, err := readFiles(tx, fv)
			if err != nil {
				return fmt.Errorf("files of %s: %w", name, err)
			}
			ps, files = append(ps, p), append(files, fs)
		}
		return nil
	})
	return ps, files, err
}

// Files returns the files of the installed package name (a key: Record.Key), sorted by
// path.
func (d *DB) Files(name string) ([]File, error) {
	var files []File
	err := d.view(func(tx *bolt.Tx) error {
		v := get(tx, filesBucket, []byte(name))
		if v == nil {
			return fmt.Errorf("%w: %s", ErrNotInstalled, name)
		}
		var err error
		files, err = readFiles(tx, v)
		if err != nil {
			return fmt.Errorf("files of %s: %w", name, err)
		}
		return nil
	})
	return files, err
}

// Intents returns the pending intents: those of the transaction, then those kept as names
// (see journalBucket), each by key.
func (d *DB) Intents() ([]Intent, error) {
	var ins []Intent
	err := d.view(func(tx *bolt.Tx) error {
		err := forEach(tx, intentsBucket, func(_, v []byte) error {
			var in Intent
			err := json.Unmarshal(v, &in)
			ins = append(ins, in)
			return err
		})
		if err != nil {
			return err
		}
		es, err := d.pendingEntries(tx)
		for _, e := range es {
			ins = append(ins, e.in)
		}
		return err
	})
	return ins, err
}

// ClearIntents deletes the intents of packages without changing their records: those kept
// as names with no sync, so the caller first makes durable what undid them (on btrfs the
// next SetIntents' fsync of their directory may make the removal durable before anything
// else), those of the transaction in one transaction however many there are.
func (d *DB) ClearIntents(names ...string) error {
	names = slices.Sorted(slices.Values(names))
	var (
		es  []intentEntry
		old bool // intents in intentsBucket
	)
	err := d.view(func(tx *bolt.Tx) (err error) {
		for _, name := range names {
			old = old || get(tx, intentsBucket, []byte(name)) != nil
		}
		es, err = d.pendingEntries(tx)
		return err
	})
	if err != nil {
		return err
	}
	d.removeEntries(es, func(e intentEntry) bool { return !slices.Contains(names, e.in.Name) })
	if !old {
		return nil
	}
	return d.update("clear intents", func(tx *bolt.Tx) error {
		b := tx.Bucket(intentsBucket)
		for _, name := range names {
			if err := b.Delete([]byte(name)); err != nil {
				return fmt.Errorf("clear intent for %s: %w", name, err)
			}
		}
		return nil
	})
}

// SetIntents records intents in one transaction, each replacing any earlier one for the
// same package.
func (d *DB) SetIntents(ins []Intent) error {
	if ok, err := d.setIntentNames(ins); ok || err != nil {
		return err
	}
	ins = slices.SortedFunc(slices.Values(ins), func(a, b Intent) int { return strings.Compare(a.Name, b.Name) })
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

// CommitRequested records packages with their files and deletes the packages named in
// remove, with their requests (Request), and the intents of all of them, in one
// transaction: files[i] are those of ps[i], from WriteFiles. It also records, as Request
// does, that the user asked for the packages named in requested and no longer for those of
// unasked, what the change does to the prefix (pc, nil for nothing): its paths' owners and
// its roll-forward, and what PutSaidWithCommit left, in the same transaction. Where the
// filesystem logs metadata in order (durable.Files.Ordered), the transaction's first sync
// makes durable every change made on it before, with the pages (carry): a commit's renames
// need no sync of their own there.
//
// Keys are put in order: bbolt splits a node only at the commit, so each put into a node
// grown by the same transaction moves the entries after it, and thousands of packages put in
// any other order cost time in the square of their number (a 50,000-deep chain, #30).
func (d *DB) CommitRequested(ps []*Record, files []*FileList, remove []string, requested map[string]repo.Requirement, pc *PrefixChange, unasked ...string) error {
	d.mu.Lock()
	said := d.commitSaid // this commit's alone, recorded or not, whatever fails below
	d.commitSaid = nil
	d.mu.Unlock()
	order, keyOf := make([]int, len(ps)), make([]string, len(ps)) // ps by key
	for i := range order {
		order[i], keyOf[i] = i, ps[i].Key()
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(keyOf[i], keyOf[j]) })
	remove = slices.Sorted(slices.Values(remove))
	vs := make([][]byte, len(ps))
	for i, p := range ps {
		v, err := json.Marshal(p)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	if err := pc.encode(); err != nil {
		return err
	}
	what := fmt.Sprintf("record %d packages", len(ps))
	if len(remove) > 0 {
		what += fmt.Sprintf(" and delete %d", len(remove))
	}
	// The intents of a first change's prefix (FirstIntent) only this commit can be.
	keys := append(append(slices.Clone(remove), keyOf...), FirstIntent)
	var void []intentEntry // the intents kept as names this commit makes void, removed once it is done
	err := d.writeWith(what, true, true, pc.sync(), func(tx *bolt.Tx) (err error) {
		if void, err = d.commitIntents(tx, keys); err != nil {
			return err
		}
		for _, name := range remove {
			if err := deleteFiles(tx, name); err != nil {
				return err
			}
			for _, b := range [][]byte{pkgsBucket, intentsBucket, requestedBucket} {
				if err := tx.Bucket(b).Delete([]byte(name)); err != nil {
					return err
				}
			}
		}
		for _, i := range order {
			if err := commitFiles(tx, keyOf[i], files[i]); err != nil {
				return err
			}
			if err := tx.Bucket(pkgsBucket).Put([]byte(keyOf[i]), vs[i]); err != nil {
				return err
			}
			if err := tx.Bucket(intentsBucket).Delete([]byte(keyOf[i])); err != nil {
				return err
			}
		}
		if err := tx.Bucket(intentsBucket).Delete([]byte(FirstIntent)); err != nil {
			return err
		}
		if err := putRequests(tx, requested, unasked); err != nil {
			return err
		}
		if err := putPrefix(tx, pc); err != nil {
			return err
		}
		if err := putSaidAll(tx, said); err != nil {
			return err
		}
		d.prime(tx)
		return nil
	})
	if err == nil && len(void) > 0 {
		// Void once recorded: removed beside what the caller does next (the prefix's
		// roll-forward), before any other use of the names (openIntentDir) or Release.
		done := make(chan struct{})
		before := d.tidied.Swap(&done)
		go func() {
			defer close(done)
			if before != nil {
				<-*before
			}
			if testHookTidy != nil {
				testHookTidy()
			}
			d.removeNames(void)
		}()
	}
	return err
}

// testHookTidy, where a test sets it, runs on CommitRequested's goroutine before the void
// names' removal.
var testHookTidy func()

// waitTidied waits for the removal of the intent names the commits so far made void.
func (d *DB) waitTidied() {
	if c := d.tidied.Load(); c != nil {
		<-*c
	}
}

// fillPercent is how full bbolt fills the pages it splits a node into (Bucket.FillPercent),
// where it would fill half: a commit puts its keys in order (CommitRequested), most past
// the last of their bucket's, which half-filled pages would leave half empty
// (docs/history.md).
const fillPercent = 0.9

// prepare readies a write transaction: it creates the buckets, records the format (mark),
// removes the marker a cut left after the last finish (unmarkFinished), where the
// transaction is summed records what PutSaid left and finishes a roll-forward its marker
// says is done (finish: one that falls back must lose nothing), and, in this DB's first,
// deletes the chunks of lists whose CommitRequested never came, before this DB writes any
// of its own. (Whoever writes holds the root's lock: no other DB is between WriteFiles and
// CommitRequested.)
func (d *DB) prepare(tx *bolt.Tx, sum bool) error {
	old := tx.Bucket(aheadBucket) == nil // made by a pkg from before lists and marks of lists written ahead
	for _, name := range buckets {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return err
		}
		b.FillPercent = fillPercent
	}
	if err := d.mark(tx); err != nil {
		return err
	}
	if err := d.unmarkFinished(tx); err != nil {
		return err
	}
	if sum {
		if err := putSaidAll(tx, d.said); err != nil { // forgotten once tx commits (writeWith)
			return err
		}
		if err := d.finish(tx); err != nil {
			return err
		}
	}
	if d.collected.Swap(true) {
		return nil
	}
	return collect(tx, old)
}

// update runs fn in a write transaction, prepared, and writes its sum.
func (d *DB) update(what string, fn func(tx *bolt.Tx) error) error {
	return d.write(what, true, false, fn)
}

// write runs fn in a write transaction, prepared, and writes its sum if summed: a transaction
// that only writes chunks no record refers to yet (WriteFiles) needs none, since a
// database that fell back from it lost nothing, and summing after each of a long list's
// chunks would read the file again for each. With carry, the transaction's first sync
// also makes durable every change made before it on the file's filesystem (see carry).
func (d *DB) write(what string, summed, carry bool, fn func(tx *bolt.Tx) error) error {
	return d.writeWith(what, summed, carry, nil, fn)
}

// writeWith is write with sync, where not nil, the caller's commit of what it did before
// the transaction (PrefixChange.Sync): where the transaction is sealed, it is not
// synced but written back, and the caller commits the filesystem after; else sync is
// called before it.
func (d *DB) writeWith(what string, summed, carry bool, sync func() error, fn func(tx *bolt.Tx) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() { d.primed = nil }()
	b, err := d.writer()
	if err != nil {
		return err
	}
	seal := d.fresh && d.sealed
	deferred := sync != nil && seal // the caller commits after: seal waits, not syncs
	if sync != nil && !deferred {
		if err := sync(); err != nil {
			b.Close()
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if carry {
		if err := d.carry(d.file, seal); err != nil {
			b.Close()
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	d.unmark = 0
	b.NoSync, b.NoGrowSync = seal, seal // seal's one fdatasync writes the size too
	err = d.protect(func() error {
		return b.Update(func(tx *bolt.Tx) error {
			tx.DB().AllocSize = growth(tx.Size())
			if err := d.prepare(tx, summed); err != nil {
				return err
			}
			return fn(tx)
		})
	})
	b.NoSync, b.NoGrowSync = false, false
	var sealedSum *sum
	if err == nil && seal {
		sealedSum, err = d.seal(b, d.file, deferred)
	}
	if err != nil {
		b.Close()
		return fmt.Errorf("%s: %w", what, err)
	}
	if summed {
		d.said = nil // recorded (prepare)
	}
	if d.fresh {
		if err := d.adopt(); err != nil {
			b.Close()
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if d.unmark != 0 { // unsynced: a marker left names a stamp finished (unmarkFinished)
		if err := d.remove(d.marker(d.unmark)); err == nil || errors.Is(err, fs.ErrNotExist) {
			d.unmarked = d.unmark
		}
	}
	d.allocate()
	d.advance(b, d.file, summed, sealedSum)
	if !d.keep(b) {
		b.Close()
	} else if p := d.primed; p != nil {
		if <-p.done; p.err == nil {
			d.listed = listMemo{db: b, id: p.id, recs: p.recs}
		}
	}
	return nil
}

// carry readies f, the database file open for a write transaction, so that bbolt's first
// fdatasync (the pages, before the meta page) makes durable all that f's filesystem logged
// before it, a commit's renames among it, where that filesystem logs in order (d.ordered;
// elsewhere the caller syncs): it moves f's size by one byte past bbolt's whole pages, even
// to odd and back, which fdatasync(2) must log, or where the size cannot change it syncs
// the filesystem (design.md, Commit protocol, 6). A sealed file (seal) whose first page
// is no longer unwritten is synced at once: its meta page is then read after a crash
// whether or not the log holds the conversion that follows it, as where ext4 without
// dioread_nolock wrote that page as zeros and marked it written when it wrote back the
// pages beside it (extent_max_zeroout_kb). d.mu is held.
func (d *DB) carry(f *os.File, sealed bool) error {
	if !d.ordered() {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || unix.Ftruncate(int(f.Fd()), st.Size^1) != nil {
		return durable.SyncFS(f)
	}
	if sealed && !firstUnwritten(f) {
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
	}
	return nil
}

// writer returns the handle for a write transaction; d.mu is held. It is the last write's
// (keep), its lock made exclusive again, where no other process reads meanwhile; else the
// file opened anew, checked, once the reader is closed. Under Options.Hold nothing but this
// process writes the file, so the handle kept needs no check again.
func (d *DB) writer() (*bolt.DB, error) {
	if b := d.reader; b != nil && d.kept && unix.Flock(int(d.file.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		d.reader, d.kept = nil, false
		return b, nil
	}
	d.dropReader() // a failed conversion of the lock may have dropped it (flock(2)): closed here
	return d.open(false)
}

// keep keeps b, whose write transaction has committed, as the reader until the next write
// (Options.Hold), so that the reads between writes, and the next write, open nothing: its
// lock is made shared, as a read-only open's is, so that other processes may read. False
// where d does not hold the file, or the lock could not be made shared; d.mu is held.
func (d *DB) keep(b *bolt.DB) bool {
	if !d.hold || unix.Flock(int(d.file.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
		return false
	}
	d.reader, d.kept = b, true
	return true
}

// growth returns the room bbolt leaves past the pages in use when a commit grows the file
// (bolt.DB.AllocSize), which allocate then gives its blocks: for size bytes in use, an
// eighth of them, at least minGrowth. bbolt's own doubles the file up to 16 MiB
// (docs/history.md).
func growth(size int64) int { return int(max(minGrowth, size/8)) }

// minGrowth is growth's least: 32 pages.
const minGrowth = 128 << 10

// allocate gives the database file blocks for all of its size, once it has grown. bbolt
// grows the file with ftruncate, which leaves a hole that the next commits write into: on a
// full filesystem those writes fail, and a remove, which frees space, could not be
// recorded. Best effort: where the filesystem cannot (or is full already), the file stays
// as it is. A file with blocks for all its size already, from an earlier process, is not
// allocated again: each command's first write would pay a fallocate. d.mu is held; d.file
// is the write transaction's, open read-write.
func (d *DB) allocate() {
	var st unix.Stat_t
	if unix.Fstat(int(d.file.Fd()), &st) != nil {
		return
	}
	size := st.Size &^ 1 // without carry's byte
	if size <= d.allocated.Load() {
		return
	}
	if st.Blocks*512 >= size || unix.Fallocate(int(d.file.Fd()), 0, 0, size) == nil {
		d.allocated.Store(size)
	}
}
