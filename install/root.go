// Package install puts packages from cached aligned tars into a root and takes them out again.
// It validates every member, builds the tree in a staging directory on the root's filesystem
// (cloning member data where the filesystem can), makes it durable with one sync, commits it
// with one rename, records it in the database, and links its files into the root's merged
// prefix. It never touches the network. Linux only.
package install

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/durable"
	"pkg/internal/termtext"
	"pkg/notice"
	"pkg/repo"
)

// Options controls how a root is opened and changed.
type Options struct {
	NoSync      bool                // skip syncfs and directory fsyncs (throwaway machines)
	LockTimeout time.Duration       // how long to wait for another pkg process; 0 waits forever
	Waiting     func(holder string) // called once if another process keeps the lock past a retry
	Owner       string              // describes this process to the ones that wait for it
	// Name, if not "", is the path the root is known by where the dir given to Open is
	// another way to it (a run root reached through its cache's descriptor): the
	// wrappers in bin/, which outlive the process, name the root by it, and Open syncs
	// bin/ in full so that they name it so.
	Name string
	// Context, when not nil, ends a wait for another process's database transaction
	// (db.Options.Context) in View, OpenReadOnly and Exists; Open and Rebuild use their ctx.
	Context context.Context
}

// Root is an open install root. It holds the root's lock until Close.
type Root struct {
	dir     string   // for messages: nothing is reached by it once open
	fd      parts    // the root and its directories, open from Open to Close
	lock    *os.File // flocked: every command that changes the root holds it to its end
	metaDir *os.File // .pkg, through which the database is opened
	db      *db.DB
	o       Options
	umask   fs.FileMode
	links   error                // a *LinksError: bin/ could not be synced at Open
	left    error                // what Open could not delete of what commands cut short left
	found   notice.RootRecovered // what Open undid or deleted of what commands cut short left, said by Notes
	made    made                 // what Open made of the root, which Abandon takes away again

	salvaged   []Salvage                   // what the last Apply kept of the trees it replaced or removed
	unlinked   *LinksError                 // the roll-forward of the last change that Open or Apply could not finish (Prefix)
	requests   []repo.Requirement          // what Request recorded, for the next Apply's commit
	requestsAt map[string]repo.Requirement // what RequestAt recorded, by key, for the next Apply's commit
	unrequests []string                    // what Unrequest recorded, for the next Apply's commit
	asked      map[string]bool             // the keys asked for, recorded and by RequestAt, and the names by Request, but Unrequest's; nil until read (bins)
	unsure     []notice.KeptTree           // what rollback kept of trees it could not tell apart, said by Notes
	aside      []notice.KeptTree           // what unroll moved aside of a first change's prefix, said by Notes
	looked     int                         // prefix paths the last change looked up and rolled forward: its cost
	sayings    []said                      // what SayWithCommit and SayOffPath left for the next Apply's commit
	fsOnce     sync.Once                   // asks filesys once
	fs         durable.Files               // what filesys returns
}

// filesys returns how the root's filesystem makes files durable (durable.ForFS), asked of
// it once: a statfs, and on ext4 a look into /sys and /proc, the same for the root's life.
func (r *Root) filesys() durable.Files {
	r.fsOnce.Do(func() { r.fs = durable.ForFS(r.fd[meta]) })
	return r.fs
}

// Open creates the root's layout if needed, takes the lock, waiting for it until ctx is
// done, and undoes whatever an interrupted command left behind. It refuses, with a
// *LayoutError, a root where what holds the place of a part of the layout is not what pkg
// made there: a symlink, say, which a start would follow to empty the directory beyond.
func Open(ctx context.Context, dir string, o Options) (*Root, error) {
	r, err := lockRoot(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	if err := r.lost(); err != nil {
		r.closeParts()
		return nil, err
	}
	if r.db, err = r.openDB(db.Options{Timeout: o.LockTimeout, Hold: true}); err != nil {
		r.closeParts()
		return nil, err
	}
	if err := r.reconcile(); err != nil {
		r.db.Release()
		r.closeParts()
		return nil, err
	}
	return r, nil
}

// lockRoot opens the root at dir (openLock) and takes its lock, waiting until ctx is done
// or o.LockTimeout has passed, however often it opens the root again (lockWait), for Open
// and Rebuild, which open its database next. ctx becomes its Options.Context.
func lockRoot(ctx context.Context, dir string, o Options) (*Root, error) {
	o.Context = ctx
	w := newLockWait(o)
	for tries := 1; ; tries++ {
		abs, fds, lock, m, err := openLock(dir)
		if errors.Is(err, fs.ErrNotExist) && tries < maxUnmadeRetries {
			continue // an unmake took away what openLock had made or opened: make it anew
		}
		if err != nil {
			return nil, err
		}
		if err := w.lock(ctx, lock, abs); err != nil { // not held: the holder's line is another's
			lock.Close()
			fds.close()
			return nil, err
		}
		if stillLinked(lock) {
			if slices.Contains(m.parts, meta) {
				removeGone(fds[top]) // what a crash of unmake may have left
			}
			return &Root{dir: abs, fd: fds, lock: lock, o: o, umask: umask(), made: m}, nil
		}
		lock.Close() // its holder took the root away, having made it: make it anew
		fds.close()
	}
}

// maxUnmadeRetries bounds the opens of a root lockRoot makes again where the unmake of
// another command, which had made it and failed, took it away as it was opened: each
// needs another whole command to fail in between (docs/history.md).
const maxUnmadeRetries = 100

// openDB opens the root's database, reached through r.metaDir, a descriptor of .pkg it
// opens, its waits ended by r's Options.Context.
func (r *Root) openDB(o db.Options) (*db.DB, error) { return r.openDBAt("db", o) }

// openDBAt opens the database file name in .pkg as openDB does the root's.
func (r *Root) openDBAt(name string, o db.Options) (*db.DB, error) {
	fd, err := unix.FcntlInt(uintptr(r.fd[meta]), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: r.path(".pkg"), Err: err}
	}
	r.metaDir = os.NewFile(uintptr(fd), r.path(".pkg"))
	o.Dir, o.Context = r.metaDir, r.o.Context
	d, err := db.Open(r.path(".pkg", name), o)
	if err != nil {
		r.metaDir.Close()
		r.metaDir = nil
	}
	return d, err
}

// closeParts closes the descriptors of the root's directories and releases the lock, held
// where r has one, emptying the owner written in it first.
func (r *Root) closeParts() error {
	r.fd.close()
	if r.metaDir != nil {
		r.metaDir.Close()
		r.metaDir = nil
	}
	if r.lock == nil {
		return nil
	}
	r.lock.Truncate(0)
	err := r.lock.Close()
	r.lock = nil
	return err
}

// OpenReadOnly opens the root at dir for Verify and DB only, without its lock, for a user
// who cannot take it: it undoes nothing and writes nothing, so a command changing the root
// meanwhile may show through. It refuses a root that Open refuses for its layout.
func OpenReadOnly(dir string, o Options) (*Root, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fds, _, err := openLayout(dir, false)
	if err == nil && fds[meta] < 0 {
		err = &os.PathError{Op: "open", Path: filepath.Join(dir, ".pkg"), Err: unix.ENOENT}
	}
	r := &Root{dir: dir, fd: fds, o: o} // it stages nothing: no umask
	if err == nil {
		r.db, err = r.openDB(db.Options{Timeout: o.LockTimeout, NoCreate: true})
	}
	if errors.Is(err, fs.ErrNotExist) {
		switch lost := r.lost(); {
		case lost != nil: // read once: a repair may link the database meanwhile
			err = lost
		case r.cutShort() || r.leftUnfinished():
			err = &reasonError{fmt.Sprintf("root %s has no database yet: a pkg command was cut short in its first change there, which the next one that locks the root undoes", dir), ErrCutShort, nil}
		default:
			err = &reasonError{"no root at " + dir, ErrNoRoot, nil}
		}
	}
	if err != nil {
		r.closeParts()
		return nil, err
	}
	return r, nil
}

// cutShort reports whether r, whose database does not exist, holds the intents of a change
// (as names, db.DB.SetIntents): a first change cut short before its commit, which Open
// undoes, its trees in pkgs/ or staging meanwhile.
func (r *Root) cutShort() bool {
	if r.fd[meta] < 0 {
		return false
	}
	fd, err := unix.Openat(r.fd[meta], intentNames, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	dir := os.NewFile(uintptr(fd), r.path(".pkg", intentNames))
	defer dir.Close()
	names, _ := dir.Readdirnames(1)
	return len(names) > 0
}

// leftUnfinished reports whether r, whose database does not exist, holds what a first
// change cut short before its intents leaves while no command holds the lock: the empty
// database Open created (db.new, which a command that ends adopts or removes) or a tree
// it staged. Open empties staging and trash. Unlike intents, these never make a lost
// database a first change (lost): the trees in pkgs/ are not theirs to undo.
func (r *Root) leftUnfinished() bool {
	if r.fd[meta] < 0 {
		return false
	}
	var st unix.Stat_t
	if unix.Fstatat(r.fd[meta], "db.new", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		if names, err := r.names(place{staging, ""}); err != nil || len(names) == 0 {
			return false
		}
	}
	lock, free, err := r.peekLock()
	if err != nil {
		return false
	}
	lock.Close()
	return free
}

// peekLock opens r's lock and reports whether no command holds it, by a shared lock that
// only looks: released with the file, which the caller closes, others looking do not see it.
func (r *Root) peekLock() (lock *os.File, free bool, err error) {
	fd, err := unix.Openat(r.fd[meta], "lock", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	lock = os.NewFile(uintptr(fd), r.path(".pkg", "lock"))
	if free, err = tryLock(lock, unix.LOCK_SH); err != nil {
		lock.Close()
		return nil, false, err
	}
	return lock, free, nil
}

// ErrLost is the cause of the *db.DamagedError that Open, OpenReadOnly, View and Exists
// return for a root whose database is gone while pkgs/ still holds trees: they are
// installed packages that only verify --repair (Rebuild) can record again, not a root where
// nothing was installed, nor trees for an install to call foreign.
var ErrLost = errors.New("missing, though pkgs/ holds installed packages")

// lost returns a *db.DamagedError (ErrLost) where r's database does not exist, nor the one
// a first commit made (db.Open adopts it), and pkgs/ holds a tree, unless a first change
// was cut short (Open undoes it); else nil. A database's sum, which a first change removes
// before it moves any tree, says one was committed: then intents left are an earlier
// commit's (their removal is not synced), not a first change's, and its undo would
// delete the installed trees. A root whose .pkg/ is gone whole (deleted as clutter) holds
// no intents: its trees in pkgs/, beside its bin/, are installed packages too.
func (r *Root) lost() error {
	if r.fd[meta] < 0 && r.fd[bin] < 0 {
		return nil
	}
	if r.fd[meta] >= 0 {
		var st unix.Stat_t
		if !errors.Is(unix.Fstatat(r.fd[meta], "db", &st, unix.AT_SYMLINK_NOFOLLOW), unix.ENOENT) {
			return nil
		}
		// db.new counts only where it holds a commit: an empty one never adopted records nothing.
		if !errors.Is(r.probeDB(), fs.ErrNotExist) {
			return nil
		}
	}
	return r.treesLost()
}

// probeDB opens r's database without creating it and closes it again, returning the
// error of the open: fs.ErrNotExist where there is none, nor a db.new that holds a commit.
func (r *Root) probeDB() error {
	d, err := r.openDB(db.Options{Timeout: r.o.LockTimeout, NoCreate: true})
	if err == nil {
		d.Release()
		r.metaDir.Close()
		r.metaDir = nil
	}
	return err
}

// treesLost is lost for a root known to have no database: a *db.DamagedError (ErrLost)
// where pkgs/ holds a tree that no first change cut short (intents, no sum) moved there.
func (r *Root) treesLost() error {
	var st unix.Stat_t
	if r.fd[meta] >= 0 && errors.Is(unix.Fstatat(r.fd[meta], "db.sum", &st, unix.AT_SYMLINK_NOFOLLOW), unix.ENOENT) && r.cutShort() {
		return nil
	}
	if names, err := r.names(place{pkgs, ""}); err != nil || len(names) == 0 {
		return nil
	}
	return &db.DamagedError{Path: r.path(".pkg", "db"), Err: ErrLost}
}

// ErrNoRoot is returned by View and Exists for a directory that holds no root.
var ErrNoRoot = errors.New("install: no root")

// ErrCutShort is returned by View and OpenReadOnly for a root that has no database yet
// but holds a first change a command was cut short in: nothing is recorded installed,
// and Open undoes the change.
var ErrCutShort = errors.New("install: first change cut short")

// Exists returns an ErrNoRoot error unless dir holds a root: its database. A root whose
// layout Open refuses exists, for Open to say why, and so does one that holds a first
// change cut short (ErrCutShort), for Open to undo, and one whose database is lost
// (ErrLost), for Rebuild to record again.
func Exists(dir string) error {
	r, err := OpenReadOnly(dir, Options{})
	if le := (*LayoutError)(nil); errors.As(err, &le) || errors.Is(err, ErrCutShort) || errors.Is(err, ErrLost) {
		return nil
	}
	if err != nil {
		return err
	}
	return r.Close()
}

// View calls fn with the root's database as the last commit left it, changing nothing and
// creating nothing, so a user who cannot write the root can read it. It does not wait for
// a command that is changing the root: fn then sees what was recorded before that command,
// and busy, if not nil, is called first with what is known of it; with "" when a command
// was cut short in the middle of a change, which the next Open undoes.
func View(dir string, o Options, busy func(holder string), fn func(d *db.DB) error) error {
	r, err := OpenReadOnly(dir, o)
	if err != nil {
		return err
	}
	defer r.Close()
	if busy != nil {
		r.tellBusy(busy)
	}
	return fn(r.db)
}

// tellBusy calls busy with the holder of r's lock, if a command holds it, or with "" if a
// command was cut short in the middle of a change.
func (r *Root) tellBusy(busy func(holder string)) {
	if lock, free, err := r.peekLock(); err == nil {
		defer lock.Close()
		if !free {
			busy(readOwner(lock))
			return
		}
	}
	if ins, err := r.db.Intents(); err == nil && len(ins) > 0 {
		busy("")
	}
}

// Close releases the database and the lock, and empties the owner written in it first.
func (r *Root) Close() error {
	r.db.Release()
	return r.closeParts()
}

// Links returns the error that kept Open from making bin/ agree with the database, or nil.
func (r *Root) Links() error { return r.links }

// Abandon closes r after a command that failed, or a change not made. If Open created the
// root's database and nothing was installed since, it removes the database first, and
// what Open made of the root (unmake), so that a first install that failed leaves the
// directory as it was: none where there was none.
func (r *Root) Abandon() error {
	if r.db.Created() {
		ps, err := r.db.List()
		ins, err2 := r.db.Intents()
		if err == nil && err2 == nil && len(ps) == 0 && len(ins) == 0 {
			r.db.Release()
			unix.Unlinkat(r.fd[meta], "db", 0)
			unix.Unlinkat(r.fd[meta], "db.sum", 0)
			r.removeTree(place{meta, intentNames})
			r.unmake()
		}
	}
	return r.Close()
}

// intentNames is the directory in .pkg where the root's database keeps the intents of a
// commit as names (db.DB.SetIntents). Those its last commit made void are void only
// against its own records: they go with it, where it goes (Abandon, Rebuild).
const intentNames = "db.intents"

// DB returns the root's database, for queries.
func (r *Root) DB() *db.DB { return r.db }

// remember records that the user was told of the standing condition key in state ("" for
// its end), so that a later command can stay quiet until the state changes: what was said
// is kept with the root, and db.DB.SaidState reads it back.
func (r *Root) remember(key, state string) error { return r.db.PutSaid(key, state) }

// Dir returns the root's absolute path.
func (r *Root) Dir() string { return r.dir }

// path returns where elem is under the root, for messages and the wrapper scripts' text:
// nothing is reached by it.
func (r *Root) path(elem ...string) string { return filepath.Join(append([]string{r.dir}, elem...)...) }

// pkgDir is where the tree of the installed package key (db.Record.Key) lives, for
// messages and the wrapper scripts.
func (r *Root) pkgDir(key string) string { return r.path("pkgs", repo.FileName(key)) }

// treeOf is the place of the tree of the installed package key: pkgs/FileName(key).
func treeOf(key string) place { return place{pkgs, repo.FileName(key)} }

// reconcile undoes every pending intent, keeps the trees salvage markers name
// (keepMarked), makes bin/ agree with the database, and empties staging and trash (what it
// cannot delete stays, for Notes to report). An intent still present means its
// database record was not written, so the database describes the tree that was there
// before; putting that tree back is always possible and always consistent. A commit leaves an intent, staging or trash
// until its links are done: finding one, bin/ is synced in full, and before they are
// emptied, so that a start cut short in between finds them again.
func (r *Root) reconcile() error {
	ins, err := r.db.Intents()
	if err != nil {
		return err
	}
	if len(ins) > 0 {
		if err := r.undo(ins); err != nil {
			return err
		}
	}
	// A commit recorded whose prefix was not finished: finished before the old trees it
	// compares with go, and those stay where it cannot be.
	p, done, err := r.db.Prefix()
	if err != nil {
		return err
	}
	var olds []place // the old trees of that commit: kept while it is not finished, else its to delete
	var prefixErr error
	replaced := make(map[place]bool) // the old trees of a commit done, which a cut at its end left
	switch {
	case p != nil && done:
		for _, o := range p.Old {
			if tree, ok := placeOf(o.Tree); ok {
				replaced[tree] = true
			}
		}
		p = nil
	case p != nil:
		prefixErr = r.rollForward(p, nil)
		if prefixErr != nil {
			r.unlinked = &LinksError{Dir: r.dir, Prefix: true, Err: prefixErr}
			r.links = r.unlinked
		}
		for _, o := range p.Old {
			if tree, ok := placeOf(o.Tree); ok {
				olds = append(olds, tree)
			}
		}
	}
	kept, stuck := r.keepMarked() // before staging and trash are emptied
	if prefixErr != nil {
		stuck = append(stuck, olds...)
	} else {
		for _, tree := range olds { // the commit's own, not what a command cut short left
			if !slices.Contains(stuck, tree) {
				r.removeTree(tree)
			}
		}
	}
	var left []place // what commands cut short left in staging and trash
	for _, d := range []part{staging, trash} {
		names, err := r.names(place{in: d})
		if err != nil {
			return err
		}
		slices.Sort(names)
		for _, name := range names {
			if p := (place{d, name}); !slices.Contains(stuck, p) {
				left = append(left, p)
			}
		}
	}
	// A root known by another name (a run root) syncs bin/ in full: its wrappers name the
	// root by the name given, which changes when its cache is restored at another path.
	if err := r.syncBins(len(ins) > 0 || len(left) > 0 || p != nil || r.o.Name != ""); err != nil {
		// The packages are as recorded; what reads or verifies them still works. The
		// links still prepared (.cmd.new) make the next start sync bin/ in full again;
		// staging and trash go, as the space they hold may be what bin/ lacks.
		r.links = errors.Join(r.links, &LinksError{Dir: r.path("bin"), Err: err})
	}
	var errs []error
	found := notice.RootRecovered{Undone: undone(ins), Kept: kept, Unsure: r.unsure, Aside: r.aside}
	for _, p := range stuck {
		found.Stuck = append(found.Stuck, r.pathOf(p))
	}
	for _, p := range left { // the lock is held: nothing was added since
		if err := r.removeTree(p); err != nil {
			errs = append(errs, err)
			continue
		}
		said := &found.Unfinished // a tree staged for an install never recorded
		if p.in == trash || replaced[p] {
			said = &found.Replaced
		}
		name := repo.NameOfFile(p.name[:max(strings.LastIndexByte(p.name, '.'), 0)])
		if name != "" && !slices.Contains(*said, name) {
			*said = append(*said, name)
		}
	}
	r.found = found
	r.left = errors.Join(errs...)
	return nil
}

// undo puts back the trees that the commits of ins replaced, the last swapped first, makes
// that durable with one sync of pkgs/ and clears ins in one transaction, so that undoing
// many intents costs one sync and one transaction, not one each. Where a tree cannot go
// back, every intent stays for the next start (rollback is idempotent).
func (r *Root) undo(ins []db.Intent) error {
	for _, in := range slices.Backward(ins) {
		if err := r.rollback(in); err != nil {
			return fmt.Errorf("undo interrupted %s of %s: %w", termtext.Quote(in.Op), termtext.Quote(in.Name), err)
		}
	}
	if slices.ContainsFunc(ins, func(in db.Intent) bool { return in.Op == firstOp }) {
		// The entries of the root unroll moved aside, durable before the intent goes.
		if err := r.commitRoot(); err != nil {
			return err
		}
	} else if err := r.sync(place{in: pkgs}); err != nil {
		return err
	}
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	return r.db.ClearIntents(names...)
}

// undone groups what undo did by operation, in the order each operation first comes in
// ins.
func undone(ins []db.Intent) []notice.Undone {
	var said []notice.Undone
	for _, in := range ins {
		if in.Op == firstOp {
			continue // its prefix, part of undoing its installs
		}
		i := slices.IndexFunc(said, func(u notice.Undone) bool { return u.Op == in.Op })
		if i < 0 {
			i = len(said)
			said = append(said, notice.Undone{Op: in.Op})
		}
		said[i].Names = append(said[i].Names, in.Name)
	}
	return said
}

// errNotPkgs is what an intent fails with whose other tree is not in staging or trash.
var errNotPkgs = errors.New("not a tree in the root's staging or trash")

// rollback puts back the tree that in's commit replaced, if its rename was done, and
// leaves in recorded. A commit that fails after its intent calls it and not undo: it must
// not retry a failed fsync or database write (a failed fsync may have dropped the pages it
// could not write, and a retry then succeeds over them), so its own undo is made durable
// by the intent, which the next start finds and completes.
func (r *Root) rollback(in db.Intent) error {
	if in.Op == firstOp {
		return r.unroll(strings.Split(in.Staging, "/"))
	}
	dst := treeOf(in.Name)
	other, ok := placeOf(in.Staging)
	if !ok || other.in == saved {
		return &os.PathError{Op: "undo", Path: r.path(in.Staging), Err: errNotPkgs}
	}
	switch in.Op {
	case "install":
		// The inodes tell where they are; the trees' shapes only where neither is in pkgs/
		// (the root moved to another filesystem, or was restored from a copy).
		ino, ok := r.inode(dst)
		if !ok || ino == in.OldInode {
			return nil
		}
		swapped, sure := ino == in.Inode, true
		if !swapped {
			swapped, sure = r.swappedElsewhere(in.Name, dst, other)
		}
		if swapped {
			return r.putBack(dst, other)
		}
		if _, there := r.inode(other); !sure && there {
			// Which tree is the old one, edited by the user, cannot be told: the other one
			// is kept rather than deleted with staging.
			kept := place{saved, repo.FileName(in.Name) + "-unsure." + other.name}
			if r.makeSaved() == nil && r.rename(other, kept) == nil {
				r.unsure = append(r.unsure, notice.KeptTree{Name: in.Name, Dir: r.pathOf(kept)})
			}
		}
	case "remove":
		if _, ok := r.inode(dst); !ok {
			if _, ok := r.inode(other); ok {
				return r.rename(other, dst)
			}
		}
	}
	return nil
}

// swappedElsewhere tells a swap whose tree changed inode since (the root moved to another
// filesystem, or was restored from a copy) by the trees' shapes: the tree at other has the
// one the database records for name, the installed version, and the tree at dst has not.
// Without a record (a first install) it reports not swapped, as the inode does: a new tree
// left in pkgs/ unrecorded is then refused by the next install rather than recorded. Where
// neither tree has the recorded shape or data (the user edited the old one), it reports
// not swapped and not sure.
func (r *Root) swappedElsewhere(name string, dst, other place) (swapped, sure bool) {
	files, err := r.db.Files(name)
	if errors.Is(err, db.ErrNotInstalled) || err == nil && len(files) == 0 {
		return false, true
	} else if err != nil {
		return false, false
	}
	if rec, err := r.db.Get(name); err == nil && len(rec.Folded) > 0 {
		// Its folded directories are in the prefix, each an empty placeholder in its tree.
		files = slices.DeleteFunc(files, func(f db.File) bool {
			return slices.ContainsFunc(rec.Folded, func(m string) bool { return f.Path != m && within(f.Path, m) })
		})
	}
	dstFd, err := r.open(dst, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false, false
	}
	defer unix.Close(dstFd)
	otherFd, err := r.open(other, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false, false
	}
	defer unix.Close(otherFd)
	switch dstOld, otherOld := hasShape(dstFd, files), hasShape(otherFd, files); {
	case dstOld != otherOld:
		return otherOld, true
	case !dstOld:
		return false, false
	}
	// Both have the recorded shape (the new version changed only contents): the first
	// recorded file whose data differs between them tells which holds the recorded data.
	for _, f := range files {
		if f.Type != tar.TypeReg {
			continue
		}
		a, errA := hashBeneath(dstFd, f.Path)
		b, errB := hashBeneath(otherFd, f.Path)
		if errA != nil || errB != nil {
			return false, false
		}
		if a != b {
			return b == f.SHA256 && a != f.SHA256, a == f.SHA256 || b == f.SHA256
		}
	}
	return false, true
}

// hasShape reports whether the tree open at fd has every path of files, each of its type
// and, for a regular file (not a hardlink, whose record has no size), of its size.
func hasShape(fd int, files []db.File) bool { return hasShapeAt(&treeAt{tree: fd}, files) }

// hasShapeAt is hasShape of the tree at t, its folded directories in the prefix.
func hasShapeAt(t *treeAt, files []db.File) bool {
	for _, f := range files {
		var st unix.Stat_t
		fd, rel := t.at(f.Path)
		if inParent(fd, rel, func(dir int, base string) error {
			return unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		}) != nil {
			return false
		}
		if st.Mode&unix.S_IFMT != recordedType(f.Type) || f.Type == tar.TypeReg && st.Size != f.Size {
			return false
		}
	}
	return true
}

// hashBeneath returns the sha256 of the regular file name beneath fd, reached through no
// symlink.
func hashBeneath(fd int, name string) ([32]byte, error) {
	var sum [32]byte
	f, err := openBeneath(fd, name, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return sum, err
	}
	file := os.NewFile(uintptr(f), name)
	defer file.Close()
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// putBack moves a committed new tree from dst back to other, swapping the old tree back into
// dst when it is still at other.
func (r *Root) putBack(dst, other place) error {
	if _, ok := r.inode(other); ok {
		return r.exchange(other, dst)
	}
	return r.rename(dst, other)
}

// rename renames a to b, each reached from its part's descriptor through no symlink: what
// may write the root cannot have pkg move a tree elsewhere, or one from elsewhere into
// staging or trash, which are emptied.
func (r *Root) rename(a, b place) error {
	return r.renameError(a, b, r.renameat(a, b, 0))
}

// renameError returns err, from renaming a to b, as rename does: nil, or an
// *os.LinkError naming both.
func (r *Root) renameError(a, b place, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EXDEV) {
		err = errSplitRoot
	}
	return &os.LinkError{Op: "rename", Old: r.pathOf(a), New: r.pathOf(b), Err: err}
}

// exchange swaps a and b, as rename reaches them.
func (r *Root) exchange(a, b place) error {
	err := r.renameat(a, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return &os.LinkError{Op: "exchange", Old: r.pathOf(a), New: r.pathOf(b), Err: errNoExchange}
	case errors.Is(err, unix.EXDEV):
		return &os.LinkError{Op: "exchange", Old: r.pathOf(a), New: r.pathOf(b), Err: errSplitRoot}
	}
	return &os.LinkError{Op: "exchange", Old: r.pathOf(a), New: r.pathOf(b), Err: err}
}

func (r *Root) renameat(a, b place, flags uint) error {
	return r.at(a, func(fa int, baseA string) error {
		return r.at(b, func(fb int, baseB string) error {
			if flags == 0 {
				return unix.Renameat(fa, baseA, fb, baseB)
			}
			return unix.Renameat2(fa, baseA, fb, baseB, flags)
		})
	})
}

// ErrNoExchange is what an upgrade on a filesystem that cannot swap two directories in one
// step (renameat2 RENAME_EXCHANGE: NFS, vfat, some FUSE filesystems) fails with.
var ErrNoExchange = errors.New("install: no exchange of directories")

var errNoExchange = &reasonError{"the filesystem cannot swap two directories in one step (renameat2 RENAME_EXCHANGE), which replacing an installed package needs", ErrNoExchange, nil}

// ErrSplitRoot is what moving a tree within the root fails with where its pkgs/ and .pkg/
// are on different filesystems (EXDEV): a mount inside the root, or overlayfs without
// redirect_dir, which cannot rename a directory of a lower layer.
var ErrSplitRoot = errors.New("install: root split across filesystems")

var errSplitRoot = &reasonError{"the root's pkgs/ and .pkg/ are on different filesystems, and pkg moves trees between them", ErrSplitRoot, nil}

// reasonError is an error worded in full that errors.Is matches to its sentinel is, so a
// sentinel keeps the package prefix while the message reads as one sentence.
type reasonError struct {
	msg string
	is  error
	err error // the cause, or nil
}

func (e *reasonError) Error() string        { return e.msg }
func (e *reasonError) Is(target error) bool { return target == e.is }
func (e *reasonError) Unwrap() error        { return e.err }

// umask reads the process umask without changing it (Linux 4.7 and later report it).
func umask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(m)
			}
		}
	}
	return 0o022
}

// unroll moves aside the entries tops of the root that a first change cut short made
// (firstChange), each renamed into .pkg/saved and said (RootRecovered.Aside): its prefix
// is on the disk without its records only where a sync of another process's logged it
// ahead of them, and the user may have written in it since. A part of the layout (bin/)
// has its entries moved instead, but the command links the change prepared. Entries
// already gone are skipped: it is called again until the intent goes.
func (r *Root) unroll(tops []string) error {
	var errs []error
	move := func(p place, name string) { // name: p's path in the root
		var st unix.Stat_t
		if err := r.stat(p, &st); errors.Is(err, unix.ENOENT) {
			return
		}
		err := r.makeSaved()
		var to place
		if err == nil {
			to, err = r.freeName(saved, "first-"+strings.ReplaceAll(name, "/", "-"))
		}
		if err == nil {
			err = r.rename(p, to)
		}
		if err == nil {
			r.aside = append(r.aside, notice.KeptTree{Name: name, Dir: r.pathOf(to)})
		}
		errs = append(errs, err)
	}
	for _, t := range tops {
		if t == "" || t == "." || t == ".." || t == ".pkg" || t == partRel(pkgs) {
			continue
		}
		if t != partRel(bin) {
			move(place{top, t}, t)
			continue
		}
		names, err := r.names(place{bin, ""})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range names {
			if pendingLink(n) && r.ourBin(n) {
				continue // a command link the change prepared: syncBins removes it
			}
			move(place{bin, n}, partRel(bin)+"/"+n)
		}
	}
	return errors.Join(errs...)
}

// commitRoot makes every change made on the root's filesystem before it durable
// (durable.Commit of the root's directory).
func (r *Root) commitRoot() error {
	if r.o.NoSync {
		return nil
	}
	return r.commitBy(top)
}

// commitBy makes every change made on the root's filesystem before it durable by
// durable.Commit of the root's directory d.
func (r *Root) commitBy(d part) error {
	fd, err := r.open(place{in: d}, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), r.pathOf(place{in: d}))
	defer f.Close()
	return durable.Commit(f)
}
