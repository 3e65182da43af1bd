package db

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	// pathsBucket maps each path of the merged prefix (relative to the root) to its owners
	// (encodeOwners), but the paths beneath a folded directory (Record.Folded), which
	// are its one package's alone: the directory's key stands for them.
	pathsBucket = []byte("paths")
	// prefixBucket holds the roll-forward of the prefix a commit left to do, under
	// pendingKey, from the transaction that records the commit to the one after its links
	// (FinishPrefix), or to the next write transaction once its marker says it is done.
	prefixBucket = []byte("prefix")
	pendingKey   = []byte("pending")
)

// Owners are the packages that list one path of the prefix, by key (Record.Key).
type Owners struct {
	Dir bool // a directory, which every package listing it shares
	// Link, where not "", is the target of a symlink the node_modules layout generates at
	// the path (a dependency's or a requested package's link), owned by one instance.
	Link string
	// Names: of a directory, the packages listing it, sorted; of a file, symlink or
	// hardlink, a stack whose first package's member is the one in the prefix, each
	// replacing those after it (Record.Replaces).
	Names []string
}

// encodeOwners writes o as its kind ('d', 'f', or 'l' followed by the link's target and
// a NUL) and its names, each ended by a NUL, which no package name or path holds.
func encodeOwners(o Owners) []byte {
	v := []byte{'f'}
	switch {
	case o.Dir:
		v[0] = 'd'
	case o.Link != "":
		v = append(append([]byte{'l'}, o.Link...), 0)
	}
	for _, n := range o.Names {
		v = append(append(v, n...), 0)
	}
	return v
}

func decodeOwners(v []byte) (Owners, error) {
	if len(v) == 0 || v[0] != 'd' && v[0] != 'f' && v[0] != 'l' || v[len(v)-1] != 0 {
		return Owners{}, errors.New("malformed owners")
	}
	o := Owners{Dir: v[0] == 'd'}
	names := v[1:]
	if v[0] == 'l' {
		target, rest, ok := bytes.Cut(names, []byte{0})
		if !ok || len(target) == 0 || len(rest) == 0 {
			return Owners{}, errors.New("malformed owners")
		}
		o.Link, names = string(target), rest
	}
	for n := range bytes.SplitSeq(names[:len(names)-1], []byte{0}) {
		o.Names = append(o.Names, string(n))
	}
	return o, nil
}

// Owners returns the owners of each of paths that any package lists, read in one
// transaction, one key per path: what a change costs follows the change, not the root.
// With no paths, it returns those of every path, for verify and repair.
func (d *DB) Owners(paths []string) (map[string]Owners, error) {
	owners := make(map[string]Owners)
	put := func(k, v []byte) error {
		o, err := decodeOwners(v)
		if err != nil {
			return fmt.Errorf("owners of %s: %w", k, err)
		}
		owners[string(k)] = o
		return nil
	}
	err := d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(pathsBucket)
		switch {
		case b == nil:
			return nil
		case paths == nil:
			return b.ForEach(put)
		}
		for _, p := range paths {
			if v := b.Get([]byte(p)); v != nil {
				if err := put([]byte(p), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return owners, err
}

// PrefixChange is what a commit changes of the prefix, recorded with its packages
// (CommitRequested).
type PrefixChange struct {
	Paths   map[string]Owners // the new owners of each path the change touches; no names: none left
	Pending *Pending          // what the prefix must be made to hold once the commit is recorded
	Replace bool              // Paths replace every path recorded (a repair)
	// Folded gives packages the commit does not record again their new Record.Folded
	// (an unfold).
	Folded map[string][]string
	// Stamp are the packages whose install time the roll-forward's end becomes
	// (FinishPrefix's names): linking a file changes its ctime.
	Stamp []string
	// Sync, where set, makes durable what the change did before its records (its trees),
	// as a commit of the filesystem does, and defers their sync to the caller. Where the
	// transaction is sealed (a new database's first), CommitRequested neither calls it nor
	// syncs: it writes the file back and waits (durable.Files.Wait), so that whatever the
	// caller does after it (its prefix) is on the disk only with it, and the caller then
	// commits the filesystem once for all of it (a root's first change on btrfs:
	// install.Root.Apply). Elsewhere it calls Sync before the transaction, which then
	// syncs as any other.
	Sync    func() error
	pending []byte
	done    []byte
}

// sync returns pc's Sync, or nil.
func (pc *PrefixChange) sync() func() error {
	if pc == nil {
		return nil
	}
	return pc.Sync
}

func (pc *PrefixChange) encode() (err error) {
	if pc != nil && pc.Pending != nil {
		if pc.pending, err = json.Marshal(pc.Pending); err == nil {
			pc.done, err = newStamp(pc.Stamp)
		}
	}
	return err
}

// Pending is the roll-forward of the prefix that a recorded commit still owes: its links
// put in place, made durable, then the record deleted (FinishPrefix). Its size follows the
// change.
type Pending struct {
	New   []string  `json:"new,omitempty"`   // packages (keys) whose recorded files the prefix must hold
	Old   []OldTree `json:"old,omitempty"`   // trees of packages replaced or removed
	Folds []Fold    `json:"folds,omitempty"` // directories to move between trees and the prefix, in order
	// Links are the generated paths (Owners.Link, and the directories made for them) that
	// the change makes, moves or takes out: their owners say what each must be.
	Links []string `json:"links,omitempty"`
	// OldLinks are the generated links the change moves or takes out, by path, as they
	// were: a symlink there with that target is pkg's to replace or remove.
	OldLinks map[string]OldLink `json:"old_links,omitempty"`
}

// OldLink is a generated link as a commit found it.
type OldLink struct {
	Target string `json:"target"`
	Owner  string `json:"owner"` // the instance whose link it was
}

// A Fold is a directory the roll-forward moves whole between a package's tree and the
// prefix (Record.Folded). The inodes tell what is done: a second run after a crash finds
// each directory where the first left it, never moving one back.
type Fold struct {
	Name   string `json:"name"`   // the package (its key)
	Member string `json:"member"` // the directory's path in the package's tree
	Path   string `json:"path"`   // its prefix path
	// Ino is the directory of the new tree in pkgs/NAME that the prefix is to hold at
	// Path, an empty placeholder put in its place; 0: none.
	Ino uint64 `json:"ino,omitempty"`
	// Old is the directory folded at Path before the commit, which goes back into Back at
	// Member, in place of its placeholder; 0: none.
	Old  uint64 `json:"old,omitempty"`
	Back string `json:"back,omitempty"` // relative to the root: an old tree, or pkgs/NAME (an unfold)
}

// OldTree is a tree a commit replaced or removed, kept where it is until the roll-forward
// is done: a path of the prefix holding its inode is pkg's to unlink, any other the user's.
type OldTree struct {
	Name    string   `json:"name"` // its key (Record.Key)
	Version string   `json:"version"`
	Kind    string   `json:"kind,omitempty"` // its record's Kind
	Tree    string   `json:"tree"`           // relative to the root: in .pkg/staging or .pkg/trash; "": none (a repair's package whose tree was gone)
	Into    string   `json:"into,omitempty"` // its record's Into
	Files   []string `json:"files"`          // its members' paths, relative to the tree
}

// putPrefix writes pc in tx.
func putPrefix(tx *bolt.Tx, pc *PrefixChange) error {
	if pc == nil {
		return nil
	}
	b := tx.Bucket(pathsBucket)
	if pc.Replace {
		if err := tx.DeleteBucket(pathsBucket); err != nil {
			return err
		}
		var err error
		if b, err = tx.CreateBucket(pathsBucket); err != nil {
			return err
		}
		b.FillPercent = fillPercent
	}
	for _, p := range slices.Sorted(maps.Keys(pc.Paths)) { // in order: see CommitRequested
		o := pc.Paths[p]
		var err error
		if len(o.Names) == 0 {
			err = b.Delete([]byte(p))
		} else {
			err = b.Put([]byte(p), encodeOwners(o))
		}
		if err != nil {
			return fmt.Errorf("owners of %s: %w", p, err)
		}
	}
	if err := putFolded(tx, pc.Folded); err != nil {
		return err
	}
	if pc.pending == nil {
		return nil
	}
	if err := tx.Bucket(prefixBucket).Put(pendingKey, pc.pending); err != nil {
		return err
	}
	return tx.Bucket(prefixBucket).Put(doneKey, pc.done)
}

// putFolded sets the Folded of the packages of folded to theirs.
func putFolded(tx *bolt.Tx, folded map[string][]string) error {
	return editRecords(tx, slices.Sorted(maps.Keys(folded)), func(name string, p *Record) { p.Folded = folded[name] })
}

// editRecords changes the records of the packages names, of those recorded, by edit.
func editRecords(tx *bolt.Tx, names []string, edit func(name string, p *Record)) error {
	b := tx.Bucket(pkgsBucket)
	for _, name := range names {
		v := b.Get([]byte(name))
		if v == nil {
			continue
		}
		var p Record
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("record of %s: %w", name, err)
		}
		edit(name, &p)
		v, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(name), v); err != nil {
			return err
		}
	}
	return nil
}

// Prefix returns the roll-forward the last commit recorded, nil if none stands, and
// whether its marker says it is done (FinishPrefix): a done one stands until the next
// write transaction, and tells a start which trees in staging and the trash the commit
// left (Old), where a cut came before it deleted them.
func (d *DB) Prefix() (p *Pending, done bool, err error) {
	err = d.view(func(tx *bolt.Tx) error {
		v := get(tx, prefixBucket, pendingKey)
		if v == nil {
			return nil
		}
		s, _ := d.finished(tx)
		done = s != nil
		p = new(Pending)
		if err := json.Unmarshal(v, p); err != nil {
			if p = nil; done {
				return nil // nothing is left to do by it
			}
			return fmt.Errorf("pending prefix: %w", err)
		}
		return nil
	})
	return p, done, err
}

// FinishPrefix finishes the pending roll-forward once its links are made: it deletes the
// record and sets the install time of the packages its stamp names (PrefixChange.Stamp),
// or names for a record without one, to at, after their links (linking a file changes its
// ctime, which salvage and verify compare with that time).
// Where the record names a marker, it makes the marker instead, with no sync (markDone),
// and calls synced(true); else synced(false), which makes the links durable, and a
// transaction. Where the filesystem commits metadata in order (XFS, ext4 with its
// journal), a marker found after a crash means every link made before it is there, and
// one lost leaves the record for the next start: synced need not sync. On btrfs one
// transaction commit makes the marker durable with the links, so that no later change of
// the user's (an edit fsynced, which btrfs logs ahead of the transaction) outlives a lost
// marker whose roll-forward the next start runs again, stamping the edit as installed.
func (d *DB) FinishPrefix(names []string, at time.Time, synced func(marked bool) error) error {
	marked, err := d.markDone()
	if err != nil {
		return err
	}
	if err := synced(marked); err != nil || marked {
		return err
	}
	names = slices.Sorted(slices.Values(names))
	return d.update("finish the prefix", func(tx *bolt.Tx) error {
		if s, err := pendingStamp(tx); err == nil && s != nil {
			names = s.Names // no room for its marker: what the commit said to stamp
		}
		if err := setInstalled(tx, names, at); err != nil {
			return err
		}
		if err := tx.Bucket(prefixBucket).Delete(doneKey); err != nil {
			return err
		}
		return tx.Bucket(prefixBucket).Delete(pendingKey)
	})
}

// setInstalled sets the install time of the packages names, of those recorded, to at.
func setInstalled(tx *bolt.Tx, names []string, at time.Time) error {
	return editRecords(tx, names, func(_ string, p *Record) { p.Installed = at })
}
