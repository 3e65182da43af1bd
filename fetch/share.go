package fetch

import (
	"archive/tar"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/repo"
	"pkg/tarutil"
)

// Consecutive versions of a package hold mostly the same files. Once a new entry's tar is
// written, and before it is committed, each member that an entry of the same package
// holds too (same sha256 and size, by their indexes) has its whole blocks shared with that
// entry's (dedupe, share_linux.go), so that N versions take about the disk space of one
// and what changed. The kernel compares the blocks byte for byte before it shares them:
// an older tar whose data were damaged shares nothing, and the new entry's data stay what
// was verified. The comparison costs little next to FICLONERANGE, which would trust the
// older tar's index (docs/history.md).
// A member's last, partial block holds the next member's header too, which
// differs from tar to tar: it stays the new tar's own. Prune and clean need nothing more:
// a block goes when the last tar that holds it goes.
const (
	maxDonors = 4       // entries of the same package, the newest versions first, that share
	maxShared = 1 << 18 // members remembered across them, at most: about 70 bytes each in the map
)

// content is what makes two members' data the same.
type content struct {
	sum  [32]byte
	size int64
}

// held is where a tar holds a member's data.
type held struct {
	tar *os.File
	off int64
}

// donors are the tars whose data a new entry may share.
type donors struct {
	tars []*os.File
	by   map[content]held
}

// donors opens the entries of the package name, except the one with sha256 except, and
// remembers where their members' data lie. Their indexes are read one at a time; an entry
// that cannot be read lends nothing.
func (c *Cache) donors(name, except string) *donors {
	d := &donors{by: map[content]held{}}
	for _, sha := range c.names.of(c, name, except) {
		if len(d.tars) == maxDonors {
			break
		}
		d.add(c, sha)
	}
	if len(d.tars) == 0 {
		return nil
	}
	return d
}

// entryNames are the cache's entries by package name, for donors: listed once per Cache,
// at its first fetch that may share, and added to as the Cache commits entries, so that a
// fetch opens the indexes of its own package's entries alone, not every entry's. An entry
// another process adds meanwhile lends nothing to this Cache's fetches; one it removes
// fails to open and lends nothing either.
type entryNames struct {
	once sync.Once
	mu   sync.Mutex
	by   map[string][]namedEntry
}

// namedEntry is an entry of one package.
type namedEntry struct{ sha, version string }

// of returns the sha256s of the entries of the package name but except, newest version
// first: all of them, as one removed since fails to open and lends nothing.
func (en *entryNames) of(c *Cache, name, except string) []string {
	en.once.Do(func() {
		es, _ := c.List() // unreadable: no donors but those this Cache commits
		en.mu.Lock()
		defer en.mu.Unlock()
		for _, e := range es {
			if e.Err == nil {
				en.addLocked(e.Name, namedEntry{e.SHA256, e.Version})
			}
		}
	})
	en.mu.Lock()
	es := slices.Clone(en.by[name])
	en.mu.Unlock()
	slices.SortFunc(es, func(a, b namedEntry) int {
		if v := repo.CompareVersions(b.version, a.version); v != 0 {
			return v
		}
		return strings.Compare(b.sha, a.sha)
	})
	var shas []string
	for _, e := range es {
		if e.sha != except {
			shas = append(shas, e.sha)
		}
	}
	return shas
}

// add records the entry of p, committed by this Cache.
func (en *entryNames) add(p repo.Package) {
	en.mu.Lock()
	defer en.mu.Unlock()
	en.addLocked(p.Name, namedEntry{p.SHA256, p.Version})
}

func (en *entryNames) addLocked(name string, e namedEntry) {
	if en.by == nil {
		en.by = map[string][]namedEntry{}
	}
	if !slices.Contains(en.by[name], e) {
		en.by[name] = append(en.by[name], e)
	}
}

// add opens the entry with this sha256 and remembers its members.
func (d *donors) add(c *Cache, sha string) {
	f, err := dirfd.Open(c.tars, tarName(sha), unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	ms, err := readMembers(c.tars, idxName(sha), f)
	if err != nil {
		f.Close()
		return
	}
	d.tars = append(d.tars, f)
	d.remember(f, ms)
}

// remember notes where f holds the data of each member of ms large enough to share a block.
func (d *donors) remember(f *os.File, ms []tarutil.Member) {
	for i := range ms {
		m := &ms[i]
		k := content{m.SHA256, m.Size}
		if _, ok := d.by[k]; ok || m.Type != tar.TypeReg || m.Size < tarutil.Alignment || len(d.by) >= maxShared {
			continue
		}
		d.by[k] = held{f, m.Offset}
	}
}

func (d *donors) close() {
	for _, f := range d.tars {
		f.Close()
	}
}

// share shares the data of the members ms of the tar dst with the donors' tars that hold
// the same (and, but on btrfs, with earlier members of dst), and returns the bytes shared.
// It stops at the first range the filesystem cannot share: dst keeps its own data, as
// written.
//
// The kernel writes a range back before it shares it, and the new tar's data are still in
// the page cache: written back at once, they share in about half the time they take range
// by range (docs/history.md), and the sync has that much less to write.
func (d *donors) share(dst *os.File, ms []tarutil.Member) int64 {
	block, bookends := shareFS(dst)
	info, err := dst.Stat()
	if block == 0 || err != nil {
		return 0
	}
	var todo []sharing
	var want int64
	for i := range ms {
		m := &ms[i]
		if m.Type != tar.TypeReg || m.Size < block {
			continue
		}
		h, ok := d.by[content{m.SHA256, m.Size}]
		if !ok || h.off%block != 0 || m.Offset%block != 0 {
			if !bookends { // a range shared within the tar would keep its first extent whole
				d.remember(dst, ms[i:i+1])
			}
			continue
		}
		todo = append(todo, sharing{h, m.Offset, m.Size / block * block})
		want += m.Size / block * block
	}
	// Where an extent stays allocated while any of its blocks is in use, what is shared
	// frees space only once the rest of the tar is written again, into extents of its
	// own: worth it when that is the smaller part.
	if len(todo) == 0 || bookends && 2*want < info.Size() {
		return 0
	}
	writeBack(dst)
	var total int64
	for i, sh := range todo {
		n, handled := dedupe(dst, sh.off, sh.from.tar, sh.from.off, sh.n)
		todo[i].n = n
		total += n
		if !handled {
			todo = todo[:i+1]
			break
		}
	}
	if bookends && total > 0 {
		rewriteOthers(dst, info.Size(), todo)
	}
	return total
}

// rewriteBuf is the buffer rewriteOthers copies through.
const rewriteBuf = 1 << 20 // 1 MiB

// sharing is a range of a new tar to share with a donor's.
type sharing struct {
	from held
	off  int64 // in the new tar
	n    int64
}

// rewriteOthers writes the bytes of the first size of f that lie outside the ranges done,
// in order, again, where they are: a filesystem that writes a changed block elsewhere
// (btrfs) puts them in new extents, and frees the ones first written, which the shared
// ranges use no more. Errors leave f as it was, with less space freed. O_DIRECT, which f
// may have been written with (filewriter.go), is turned off for these unaligned writes.
func rewriteOthers(f *os.File, size int64, done []sharing) {
	clearDirect(f)
	buf := make([]byte, rewriteBuf)
	at := int64(0)
	for i := 0; at < size; i++ {
		end := size
		if i < len(done) {
			end = done[i].off
		}
		for at < end {
			b := buf[:min(rewriteBuf, end-at)]
			if _, err := f.ReadAt(b, at); err != nil {
				return
			}
			if _, err := f.WriteAt(b, at); err != nil {
				return
			}
			at += int64(len(b))
		}
		if i < len(done) {
			at = done[i].off + done[i].n
		}
	}
}

// readMembers reads the members listed by the entry index file name of the directory d,
// of the tar f.
func readMembers(d *os.File, name string, f *os.File) ([]tarutil.Member, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ix, err := openEntryIndex(d, name)
	if err != nil {
		return nil, err
	}
	defer ix.f.Close()
	return ix.members(info.Size())
}

// share shares what it can of the new tar of p, written to tmp with its index in the
// file sums of tmp/, with the entries of p's package.
func (c *Cache) share(tmp *os.File, sums string, p repo.Package) {
	if block, _ := shareFS(tmp); block == 0 {
		return // before listing the cache and reading indexes, on every fetch
	}
	d := c.donors(p.Name, p.SHA256)
	if d == nil {
		return
	}
	defer d.close()
	if ms, err := readMembers(c.tmp, sums, tmp); err == nil {
		d.share(tmp, ms)
	}
}
