package fetch

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/regfile"
)

// The cache's size, for its limits, is the disk its entries occupy, each block counted
// once however many entries share it (share.go dedupes the members versions have in
// common): the physical ranges of the tars' extents (FIEMAP) are merged, and each index
// and each entry's tails (tails.go) add their own blocks. Where the
// filesystem does not say where data lie, a tar counts its allocated blocks alone, as du
// does. Blocks a root's installed files share with a tar count as the cache's: removing the
// entry would not free them, but a prune never removes an entry a root uses (a clean does,
// and Trimmed.Freed is then the disk the cache no longer occupies, not what its
// filesystem gains).

// span is a range of bytes, [from, to).
type span struct{ from, to int64 }

// usage is the disk a list of entries occupies, and what removing each would free.
type usage struct {
	bounds  []int64   // the edges of the pieces the entries' places cut their filesystem into
	holders []int32   // how many entries hold each piece
	pieces  [][]piece // each entry's runs of pieces
	alone   []int64   // each entry's bytes no other shares: its index, its tails, its data at no known place
	total   int64
}

// piece is a run of pieces of a usage, [from, to).
type piece struct{ from, to int }

// usage measures the disk the entries es occupy.
func (c *Cache) usage(es []Entry) *usage {
	u := &usage{pieces: make([][]piece, len(es)), alone: make([]int64, len(es))}
	places := make([][]span, len(es))
	for i, e := range es {
		places[i], u.alone[i] = c.entryPlaces(e.SHA256)
		for _, s := range places[i] {
			u.bounds = append(u.bounds, s.from, s.to)
		}
		u.total += u.alone[i]
	}
	slices.Sort(u.bounds)
	u.bounds = slices.Compact(u.bounds)
	u.holders = make([]int32, max(len(u.bounds)-1, 0))
	for i, ss := range places {
		for _, s := range ss {
			from, _ := slices.BinarySearch(u.bounds, s.from)
			to, _ := slices.BinarySearch(u.bounds, s.to)
			p := piece{from, to}
			u.pieces[i] = append(u.pieces[i], p)
			for k := p.from; k < p.to; k++ {
				if u.holders[k]++; u.holders[k] == 1 {
					u.total += u.bounds[k+1] - u.bounds[k]
				}
			}
		}
	}
	return u
}

// remove takes entry i out of u and returns the bytes that frees.
func (u *usage) remove(i int) int64 {
	freed := u.alone[i]
	for _, p := range u.pieces[i] {
		for k := p.from; k < p.to; k++ {
			if u.holders[k]--; u.holders[k] == 0 {
				freed += u.bounds[k+1] - u.bounds[k]
			}
		}
	}
	u.pieces[i], u.alone[i] = nil, 0
	u.total -= freed
	return freed
}

// entryPlaces returns where the data of an entry's tar lie, merged, and the bytes of the
// entry that lie at no known place: its index's and its tails'.
func (c *Cache) entryPlaces(sha string) ([]span, int64) {
	alone := allocated(c.tars, idxName(sha)) + tailsAllocated(c.tars, tailsName(sha))
	f, err := dirfd.Open(c.tars, tarName(sha), unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, alone
	}
	defer f.Close()
	places, other, ok := placesOf(f)
	if !ok {
		return nil, alone + allocated(c.tars, tarName(sha))
	}
	slices.SortFunc(places, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	merged := places[:0]
	for _, s := range places {
		if n := len(merged); n > 0 && s.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, s.to)
		} else {
			merged = append(merged, s)
		}
	}
	return merged, alone + other
}

// allocated returns the bytes of disk the file name of the directory d occupies, as du
// counts them.
func allocated(d *os.File, name string) int64 {
	var st unix.Stat_t
	if unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return st.Blocks * 512
}

// DiskUsage returns the bytes of disk the entries es of the cache occupy, each block
// counted once however many of them share it, as Trim counts them.
func (c *Cache) DiskUsage(es []Entry) int64 { return c.usage(es).total }

// Limits bound what the cache keeps of the entries nothing needs (Trim). Zero means no
// limit of that kind.
type Limits struct {
	OlderThan time.Duration // an entry unused for longer goes
	MaxSize   int64         // bytes of disk: the least recently used go until the cache occupies at most this
}

// Trimmed is what Trim did.
type Trimmed struct {
	Removed []Entry // least recently used first
	Freed   int64   // bytes of disk the cache no longer occupies
	Size    int64   // bytes of disk the cache occupies now
}

// Trim removes, of the entries keep does not hold, those l.OlderThan says are old, then the
// least recently used until the cache occupies at most l.MaxSize; without limits, all of
// them. What keep holds stays, even past the limits. c should be Exclusive: the entries
// other processes are using are then only those keep holds.
func (c *Cache) Trim(l Limits, keep func(Entry) bool) (Trimmed, error) {
	es, err := c.List()
	if err != nil {
		return Trimmed{}, err
	}
	u := c.usage(es)
	var order []int // of the entries that may go, least recently used first
	for i, e := range es {
		if !keep(e) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return es[a].Used.Compare(es[b].Used) })
	cut := time.Now().Add(-l.OlderThan)
	drop := make(map[string]int64) // sha256 → bytes its removal frees
	for _, i := range order {
		e := es[i]
		switch {
		case l == Limits{}: // every one goes
		case l.OlderThan > 0 && e.Used.Before(cut):
		case l.MaxSize > 0 && u.total > l.MaxSize:
		default:
			continue
		}
		drop[e.SHA256] = u.remove(i)
	}
	removed, err := c.removeEntries(func(e Entry) bool { _, ok := drop[e.SHA256]; return !ok })
	t := Trimmed{Removed: removed, Size: u.total}
	for _, e := range removed {
		t.Freed += drop[e.SHA256]
		delete(drop, e.SHA256)
	}
	for _, n := range drop { // kept: an error stopped removeEntries
		t.Size += n
	}
	slices.SortStableFunc(t.Removed, func(a, b Entry) int { return a.Used.Compare(b.Used) })
	return t, err
}

// pruneStamp is the file of the cache whose mtime is its last prune.
const pruneStamp = "last-prune"

// LastPruned returns when MarkPruned was last called on the cache; the zero time if never.
func (c *Cache) LastPruned() (time.Time, error) {
	var st unix.Stat_t
	err := unix.Fstatat(int(c.use.Fd()), pruneStamp, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, &os.PathError{Op: "stat", Path: c.stampPath(), Err: err}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return time.Time{}, notCache(c.dir, "%s is not a regular file", c.stampPath())
	}
	return time.Unix(st.Mtim.Unix()), nil
}

// MarkPruned records that the cache is pruned now. The stamp is opened read-write and
// O_NONBLOCK, so that a FIFO the cache's owner put there opens at once and is refused, and
// handed over (which refuses a file with another link: root's, linked in) before its times
// are set through the descriptor.
func (c *Cache) MarkPruned() error {
	f, err := dirfd.Open(c.use, pruneStamp, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK, 0o644)
	if err == nil {
		err = regfile.Check(f)
		if err == nil {
			err = c.owner.give(int(f.Fd()), c.stampPath())
		}
		if err == nil {
			if err = dirfd.Touch(f); err != nil {
				err = &fs.PathError{Op: "touch", Path: f.Name(), Err: err}
			}
		}
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("record the prune of the cache: %w", err)
	}
	return nil
}

func (c *Cache) stampPath() string { return filepath.Join(c.dir, pruneStamp) }
