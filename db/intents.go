package db

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"pkg/internal/durable"
)

// Intents are kept, where the filesystem commits metadata in order (durable.Files.Ordered:
// XFS, ext4 with its journal), as names in the directory <db>.intents, one per intent, hard
// links of one empty file (makeIntentName), made with no sync: the renames of the commit
// come after them, so a crash that kept a rename kept them too, and the first sync of the
// transaction that records the commit makes both durable at once (carry). On btrfs, whose
// fsync logs one inode's changes ahead of the transaction (a directory's: its new entries,
// and a new directory's own name), they are names too, of empty files each, made durable
// before the renames by one fsync of their directory, where a transaction of their own took
// bbolt's two fdatasyncs (but a first change's, whose one transaction commit keeps them
// before its renames: FirstIntent). Each name holds a nonce, one per SetIntents; the
// transaction that records the commit records the nonce in journalBucket (committedKey),
// which makes those names void however late they are removed. Elsewhere, and where a name
// would be too long, intents are a transaction of their own in intentsBucket, as they are
// read from a database of an older pkg.
var (
	journalBucket = []byte("journal")
	committedKey  = []byte("committed") // the nonce of the intents the last commit recorded, 8 bytes big-endian
)

// intentDir is the directory of the intents kept as names.
func (d *DB) intentDir() string { return d.path + ".intents" }

// files returns the durable.Files of the database's filesystem; d.mu is not needed.
func (d *DB) files() durable.Files {
	d.fsOnce.Do(func() {
		if d.dir != nil {
			d.fs = durable.ForFS(int(d.dir.Fd()))
			return
		}
		if f, err := os.Open(filepath.Dir(d.path)); err == nil {
			d.fs = durable.ForFS(int(f.Fd()))
			f.Close()
		}
	})
	return d.fs
}

// ordered reports whether the database's filesystem commits metadata in order; d.mu is
// not needed.
func (d *DB) ordered() bool { return d.files().Ordered() }

// FirstIntent is the name of the intent of a root's first change on btrfs
// (install.Root.Apply), which names the root's entries its prefix adds: the commit that
// records the change makes it void with the packages' own.
const FirstIntent = ".first"

// IntentFits reports whether in can be kept as a name where intents are (intentName).
func IntentFits(in Intent) bool {
	_, ok := intentName(0, in)
	return ok
}

// intentName encodes in as the name of an entry of intentDir with nonce, or returns false
// where it is too long for a name (NAME_MAX).
func intentName(nonce uint64, in Intent) (string, bool) {
	name := fmt.Sprintf("%016x %s %d %d %s %s", nonce, url.PathEscape(in.Op), in.Inode, in.OldInode, url.PathEscape(in.Staging), url.PathEscape(in.Name))
	return name, len(name) <= 255
}

// parseIntentName decodes an entry of intentDir.
func parseIntentName(name string) (uint64, Intent, error) {
	f := strings.Split(name, " ")
	if len(f) != 6 {
		return 0, Intent{}, errors.New("malformed")
	}
	var in Intent
	nonce, err := strconv.ParseUint(f[0], 16, 64)
	if err == nil {
		in.Inode, err = strconv.ParseUint(f[2], 10, 64)
	}
	if err == nil {
		in.OldInode, err = strconv.ParseUint(f[3], 10, 64)
	}
	if err == nil {
		in.Op, err = url.PathUnescape(f[1])
	}
	if err == nil {
		in.Staging, err = url.PathUnescape(f[4])
	}
	if err == nil {
		in.Name, err = url.PathUnescape(f[5])
	}
	return nonce, in, err
}

// openIntentDir opens intentDir, making it where make is true; nil, nil where it is
// missing and not made. It waits for the removal of the names a commit made void.
func (d *DB) openIntentDir(make bool) (*os.File, error) {
	d.waitTidied()
	return d.openIntents(make)
}

// openIntents is openIntentDir with no wait.
func (d *DB) openIntents(make bool) (*os.File, error) {
	at, name := unix.AT_FDCWD, d.intentDir()
	if d.dir != nil {
		at, name = int(d.dir.Fd()), filepath.Base(name)
	}
	if make {
		if err := unix.Mkdirat(at, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, &os.PathError{Op: "mkdir", Path: d.intentDir(), Err: err}
		}
	}
	fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) && !make {
		return nil, nil
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.intentDir(), Err: err}
	}
	return os.NewFile(uintptr(fd), d.intentDir()), nil
}

// intentEntry is an entry of intentDir.
type intentEntry struct {
	name  string
	nonce uint64
	in    Intent
}

// intentEntries returns the entries of intentDir, nil where it is missing.
func (d *DB) intentEntries() ([]intentEntry, error) {
	dir, err := d.openIntentDir(false)
	if dir == nil || err != nil {
		return nil, err
	}
	defer dir.Close()
	return d.entriesIn(dir)
}

// entriesIn returns the entries of dir, intentDir open, sorted by name.
func (d *DB) entriesIn(dir *os.File) ([]intentEntry, error) {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	es := make([]intentEntry, 0, len(names))
	for _, name := range names {
		nonce, in, err := parseIntentName(name)
		if err != nil {
			return nil, fmt.Errorf("intent %q in %s: %w", name, d.intentDir(), err)
		}
		es = append(es, intentEntry{name, nonce, in})
	}
	return es, nil
}

// committed returns the nonce of the intents the last commit recorded, 0 if none.
func committed(tx *bolt.Tx) uint64 {
	if v := get(tx, journalBucket, committedKey); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// removeEntries removes the entries es of intentDir that keep returns false for, unsynced;
// es is the caller's no more.
func (d *DB) removeEntries(es []intentEntry, keep func(intentEntry) bool) {
	d.waitTidied()
	d.removeNames(slices.DeleteFunc(es, keep))
}

// removeNames removes the entries es of intentDir, unsynced, with no wait for the names a
// commit made void: it removes them, on CommitRequested's goroutine.
func (d *DB) removeNames(es []intentEntry) {
	if len(es) == 0 {
		return
	}
	if dir, err := d.openIntents(false); dir != nil && err == nil {
		defer dir.Close()
		removeIn(dir, es)
	}
}

// removeIn removes the entries es of dir, intentDir open, unsynced.
func removeIn(dir *os.File, es []intentEntry) {
	for _, e := range es {
		unix.Unlinkat(int(dir.Fd()), e.name, 0)
	}
}

// setIntentNames records ins as names of intentDir, unsynced where the filesystem commits
// metadata in order and synced by their directory on btrfs (see journalBucket), each
// replacing any pending one of the same package, or returns false, having done nothing,
// where they cannot be (another filesystem, or a name too long). The intents still pending
// of other packages are made again with the new nonce, so that one nonce is pending at a
// time; the old entries then go, with those a commit made void.
func (d *DB) setIntentNames(ins []Intent) (bool, error) {
	fs := d.files()
	if !fs.Ordered() && !fs.Tracks() { // Tracks and not Ordered: btrfs
		return false, nil
	}
	dir, err := d.openIntentDir(false)
	if err != nil {
		return false, err
	}
	var all []intentEntry // removed once the new names are made
	if dir != nil {
		defer dir.Close()
		if all, err = d.entriesIn(dir); err != nil {
			return false, err
		}
	}
	var done uint64
	if err := d.view(func(tx *bolt.Tx) error { done = committed(tx); return nil }); err != nil {
		return false, err
	}
	for _, e := range all {
		if e.nonce != done && !slices.ContainsFunc(ins, func(in Intent) bool { return in.Name == e.in.Name }) {
			ins = append(ins, e.in)
		}
	}
	nonce := rand.Uint64() | 1
	names := make([]string, len(ins))
	for i, in := range ins {
		var ok bool
		if names[i], ok = intentName(nonce, in); !ok {
			return false, nil
		}
	}
	if dir == nil {
		dir, err = d.openIntentDir(true)
		if full(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		defer dir.Close()
	}
	for i, name := range names {
		if err := d.makeIntentName(dir, names[:i], name, fs.Ordered()); err != nil {
			for _, made := range names[:i] {
				unix.Unlinkat(int(dir.Fd()), made, 0)
			}
			if full(err) {
				return false, nil
			}
			return false, fmt.Errorf("record %d intents: %w", len(ins), err)
		}
	}
	removeIn(dir, all)
	// The names made and removed, durable before any rename; but not a first change's
	// (those with FirstIntent): nothing it does is synced before the transaction commit
	// that ends its roll-forward, and any commit keeps the names before its renames.
	first := slices.ContainsFunc(ins, func(in Intent) bool { return in.Name == FirstIntent })
	if !fs.Ordered() && !first {
		if err := dir.Sync(); err != nil {
			return false, fmt.Errorf("record %d intents: %w", len(ins), err)
		}
	}
	return true, nil
}

// makeIntentName makes name in dir, intentDir open, after made: where link is true, a hard
// link to the file the last of made is, which takes no inode (design.md, Commit protocol);
// else, or where there is none or the link is refused for a reason a file of its own does
// not share (linkRefused), an empty file.
func (d *DB) makeIntentName(dir *os.File, made []string, name string, link bool) error {
	fd := int(dir.Fd())
	if link && len(made) > 0 {
		err := unix.Linkat(fd, made[len(made)-1], fd, name, 0)
		if err == nil {
			return nil
		}
		if !linkRefused(err) {
			return &os.LinkError{Op: "link", Old: filepath.Join(d.intentDir(), made[len(made)-1]), New: filepath.Join(d.intentDir(), name), Err: err}
		}
	}
	f, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(d.intentDir(), name), Err: err}
	}
	unix.Close(f)
	return nil
}

// linkRefused reports whether err, of a hard link to an intent's name, says only that this
// link is refused, where a new empty file would still be made: EMLINK, the file has as many
// links as the filesystem allows (ext4: 65,000); EPERM, EACCES and EXDEV, a policy (an LSM,
// seccomp) that refuses links but not creates. No space left is not: setIntentNames reads
// it (full) and records the intents in a transaction instead.
func linkRefused(err error) bool {
	switch err {
	case unix.EMLINK, unix.EPERM, unix.EACCES, unix.EXDEV:
		return true
	}
	return false
}

// full reports whether err says the filesystem has no inode or block for an intent's name:
// the database's free pages may still hold it, so that a remove works on a full
// filesystem.
func full(err error) bool { return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) }

// pendingEntries returns the entries of intentDir that no commit made void; tx is a
// transaction of d's.
func (d *DB) pendingEntries(tx *bolt.Tx) ([]intentEntry, error) {
	es, err := d.intentEntries()
	if err != nil {
		return nil, err
	}
	done := committed(tx)
	return slices.DeleteFunc(es, func(e intentEntry) bool { return e.nonce == done }), nil
}

// commitIntents makes void, in the transaction tx that records the packages named in
// keys, the intents pending as names, recording their nonce; those of other packages move
// into intentsBucket. It returns the entries to remove once tx committed.
func (d *DB) commitIntents(tx *bolt.Tx, keys []string) ([]intentEntry, error) {
	es, err := d.pendingEntries(tx)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	for _, e := range es {
		if slices.Contains(keys, e.in.Name) {
			continue
		}
		v, err := json.Marshal(e.in)
		if err != nil {
			return nil, err
		}
		if err := tx.Bucket(intentsBucket).Put([]byte(e.in.Name), v); err != nil {
			return nil, err
		}
	}
	if slices.ContainsFunc(es, func(e intentEntry) bool { return e.nonce != es[0].nonce }) {
		return nil, errIntentsLeft // setIntentNames keeps one
	}
	return es, tx.Bucket(journalBucket).Put(committedKey, binary.BigEndian.AppendUint64(nil, es[0].nonce))
}

// errIntentsLeft is the error of a commit that finds intents of two nonces pending, which
// one committed nonce cannot make void.
var errIntentsLeft = errors.New("db: intents of more than one change pending")
