// Package notice holds what the engine says beside its results and its errors: typed
// values, each carrying its facts, that an observer hears (txn.Observer.Notice) and
// report.NoticeText words. A note is advice a quiet command may leave out; a warning is
// said all the same.
package notice

import "time"

// Notice is one thing to say; Warning reports whether it is a warning rather than a note.
type Notice interface{ Warning() bool }

type note struct{}

func (note) Warning() bool { return false }

type warning struct{}

func (warning) Warning() bool { return true }

// RootRecovered: opening the root (install.Open) undid or deleted what earlier commands
// cut short left there. Each list is in the order Open found it.
type RootRecovered struct {
	note
	Undone     []Undone   // the interrupted changes undone, one per operation
	Kept       []KeptTree // old trees with the user's files in them that a commit replaced, kept
	Unsure     []KeptTree // trees an interrupted install left that could not be told from the one in pkgs/, kept
	Aside      []KeptTree // entries of the root an interrupted first install may have made (Name, relative to the root), moved aside into Dir
	Stuck      []string   // the paths of trees that may hold the user's files, not kept yet: they stay for the next start
	Unfinished []string   // the packages whose unfinished install was deleted
	Replaced   []string   // the packages whose replaced or removed tree was deleted
}

// Undone: an interrupted Op ("install", "remove") of the packages Names was undone.
type Undone struct {
	Op    string
	Names []string
}

// KeptTree: the tree Name (a package's; for RootRecovered.Aside, an entry relative to the
// root) was kept in the directory Dir.
type KeptTree struct{ Name, Dir string }

// RootLeftover: opening the root could not delete what earlier commands cut short left
// (Err says what); the root is as recorded.
type RootLeftover struct {
	warning
	Err error
}

// RootOfUser: this process, running as root, opened the root Dir, which belongs to the
// user UID.
type RootOfUser struct {
	note
	Dir string
	UID uint32
}

// RootBusy: the root Dir is read without waiting for Holder, which is changing it ("": a
// change was cut short), so what is read is what was installed before that change.
type RootBusy struct {
	note
	Dir, Holder string
}

// RootNotYours: the root Dir is not the user's, so it is verified without its lock.
type RootNotYours struct {
	note
	Dir string
}

// NothingInstalled: there is no root, Err saying where (it wraps install.ErrNoRoot).
type NothingInstalled struct {
	note
	Err error
}

// Saved: the directory Dir keeps Count files that upgrades and removes found added or
// changed in packages' directories.
type Saved struct {
	note
	Dir   string
	Count int
}

// Kept: a sync keeps the installed packages Names, which the lockfile Lock does not list.
type Kept struct {
	note
	Names []string
	Lock  string
}

// Failover: a location of a repository (its URL, a mirror or a by-digest mirror) failed
// (Err), so To is used.
type Failover struct {
	note
	To  string
	Err error
}

// OfflineIndex: offline, the index of URL is used as last read, at Read.
type OfflineIndex struct {
	note
	URL  string
	Read time.Time
}

// ExpiredIndex: offline, the last verified index of the repository at Location (its
// version Version) is used, which expired at Expires.
type ExpiredIndex struct {
	warning
	Location string
	Version  uint64
	Expires  time.Time
}

// NoIndex: a repair had neither an index nor the records it replaced to describe the
// Packages ("NAME VERSION") it recorded, so they are recorded without their commands,
// libraries and dependencies (db.Record.Bare) until installed again from an entry that
// has them. Why says why no index was read ("" where one was, and it
// does not offer them).
type NoIndex struct {
	warning
	Why      string
	Packages []string
}

// NoCache: there is no cache at Dir, so nothing is cached.
type NoCache struct {
	note
	Dir string
}

// CacheWaiting: a command waits for the other commands using the cache Dir to finish,
// the processes Pids where they are known.
type CacheWaiting struct {
	note
	Dir  string
	Pids []int
}

// ForgotRoot: a prune forgot the root Dir, which installed from the cache and is gone.
type ForgotRoot struct {
	note
	Dir string
}

// NotPruned: an automatic prune of the cache failed (Err).
type NotPruned struct {
	note
	Err error
}

// AutoPruned: an automatic prune removed Removed cached packages no installed package
// uses, freeing Freed bytes; the cache takes Size.
type AutoPruned struct {
	note
	Removed     int
	Freed, Size int64
}

// RunRootsPruned: an automatic prune removed Count run roots unused for OlderThan.
type RunRootsPruned struct {
	note
	Count     int
	OlderThan time.Duration
}
