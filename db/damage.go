package db

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"pkg/internal/fiemap"
)

// DamagedError is returned for a database file that cannot be trusted: bbolt cannot read
// it, its pages are not those its last commit left, or it holds an older transaction than
// the last one committed (bbolt fell back to its other meta page, or the file was replaced
// by an older copy). Nothing may be undone or deleted on the strength of what it records.
type DamagedError struct {
	Path string // the database file
	Err  error
}

func (e *DamagedError) Error() string { return fmt.Sprintf("%s is damaged: %v", e.Path, e.Err) }
func (e *DamagedError) Unwrap() error { return e.Err }

var (
	// ErrStale is a DamagedError's cause for a file older than its last commit.
	ErrStale      = errors.New("db: database older than its last commit")
	errSum        = errors.New("pages differ from those the last commit left")
	errEmpty      = errors.New("empty file")
	errShort      = errors.New("cut short: smaller than its two meta pages")
	errNotRegular = errors.New("not a regular file")
)

// staleError is the cause of a DamagedError for a file older than its sum file.
type staleError struct{ held, committed uint64 }

func (e *staleError) Error() string {
	return fmt.Sprintf("older than its last commit: it holds transaction %d, and %d was committed", e.held, e.committed)
}

func (e *staleError) Is(target error) bool { return target == ErrStale }

// damaged returns a *DamagedError about d's file.
func (d *DB) damaged(err error) error { return &DamagedError{Path: d.path, Err: err} }

// protect runs fn, making a panic or a memory fault of bbolt's a *DamagedError: bbolt trusts
// the pages it maps, and a damaged one sends it outside the map (a fault) or into its own
// assertions (a panic). A page that loops back on its ancestors is beyond it (a stack
// overflow is not recoverable): the sum file catches such damage before bbolt reads it.
func (d *DB) protect(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = d.damaged(fmt.Errorf("bbolt: %v", v))
		}
	}()
	return fn()
}

// A sum file (the database's path + ".sum") records the last commit: its transaction id,
// the database's pages then, and the sum of its pages in use but the two meta pages (which
// bbolt checks itself, and whose other one the next commit rewrites): each page's CRC-32C,
// mixed with the page's number into 64 bits (pageHash), added up modulo 2^64. It is
// written after each commit, without a sync: a crash may leave an older sum, which says
// nothing of a newer file, never a newer sum, which would call a good file damaged. The
// pages a commit cut short writes were free in the transaction before it, so a sum stays
// true of its file until the next commit.
//
// A sum of each page's own hash follows from the one before a commit by the pages the
// commit allocated and freed alone (sumSince): bbolt never writes a page in use, it writes
// pages that were free and then frees those they replace. So a commit's sum costs what the
// commit changed, not the database's size: one small install into a root that holds the
// kernel tree's 80,000 file records reads a few pages, not the 16 MiB of them.
type sum struct {
	txid, pages uint64
	total       uint64
}

const (
	sumMagic = "pkgsum2\n"
	sumSize  = len(sumMagic) + 8 + 8 + 8 + 4 // magic, txid, pages, total, CRC-32C of the rest
)

// castagnoli returns the CRC-32C table, built on first use (hash/crc32 keeps it) rather than
// at the start of every command.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

func (s sum) encode() []byte {
	b := append([]byte(sumMagic), make([]byte, sumSize-len(sumMagic))...)
	binary.BigEndian.PutUint64(b[8:], s.txid)
	binary.BigEndian.PutUint64(b[16:], s.pages)
	binary.BigEndian.PutUint64(b[24:], s.total)
	binary.BigEndian.PutUint32(b[32:], crc32.Checksum(b[:32], castagnoli()))
	return b
}

// readSum returns d's sum file, false where there is none or it is not whole (cut short
// by a crash, or from before sums, or of sums before this form).
func (d *DB) readSum() (sum, bool) {
	f, err := d.openFile(d.path+".sum", os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return sum{}, false
	}
	defer f.Close()
	b := make([]byte, sumSize+1)
	n, _ := io.ReadFull(f, b)
	if n != sumSize {
		return sum{}, false
	}
	return decodeSum(b[:n])
}

// decodeSum decodes b, a sum as encode makes it; false where it is not one.
func decodeSum(b []byte) (sum, bool) {
	if len(b) != sumSize || !bytes.HasPrefix(b, []byte(sumMagic)) ||
		binary.BigEndian.Uint32(b[32:]) != crc32.Checksum(b[:32], castagnoli()) {
		return sum{}, false
	}
	return sum{txid: binary.BigEndian.Uint64(b[8:]), pages: binary.BigEndian.Uint64(b[16:]), total: binary.BigEndian.Uint64(b[24:])}, true
}

// pageHash is a page's part of a sum: its CRC-32C and its number, mixed (splitmix64's
// finalizer) so that a page's change moves the sum by an amount no other page's undoes
// but by chance.
func pageHash(id uint64, crc uint32) uint64 {
	x := id<<32 ^ uint64(crc)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// sumAll returns the sum of tx's pages, read from f, the database file: every page.
func sumAll(tx *bolt.Tx, f *os.File) (sum, error) {
	size := int64(tx.DB().Info().PageSize)
	s := sum{txid: uint64(tx.ID()), pages: uint64(tx.Size() / size)}
	err := s.addPages(f, size, func(id uint64) (bool, error) {
		info, err := tx.Page(int(id))
		return err == nil && info.Type == "free", err
	})
	return s, err
}

// addPages adds to s the pages in use of its file f, of size bytes each: from the third
// (past the meta pages) to s.pages, but those free says are free.
func (s *sum) addPages(f *os.File, size int64, free func(id uint64) (bool, error)) error {
	// 64 KiB, or a page where pages are larger: sealHolds takes the size from a meta page.
	buf := make([]byte, max(64<<10/size, 1)*size)
	from := uint64(2) // the first page of the run of pages in use being summed
	flush := func(to uint64) error {
		for from < to {
			n := min(to-from, uint64(int64(len(buf))/size))
			if _, err := f.ReadAt(buf[:int64(n)*size], int64(from)*size); err != nil {
				return fmt.Errorf("read pages %d to %d of %d: %w", from, from+n, s.pages, err)
			}
			for i := range int64(n) {
				s.total += pageHash(from+uint64(i), crc32.Checksum(buf[i*size:(i+1)*size], castagnoli()))
			}
			from += n
		}
		return nil
	}
	for id := from; id < s.pages; id++ {
		isFree, err := free(id)
		if err != nil {
			return err
		}
		if !isFree {
			continue
		}
		if err := flush(id); err != nil {
			return err
		}
		from = id + 1
	}
	return flush(s.pages)
}

// errUnfollowed is sumSince's answer where the file does not show the commit after prev
// as it must (the other meta page is not prev's transaction, no free list is stored):
// the sum is then made of every page.
var errUnfollowed = errors.New("db: the commit does not follow the sum before it")

// The layout of bbolt's pages (version 2 of its file format) that sumSince reads: a page
// header (its number, flags, a count and the pages it overflows into), and a meta page's
// fields after it.
const (
	pageHeaderSize   = 16
	freelistFlag     = 0x10
	metaMagic        = 0xED0CDAED
	metaFlagsAt      = pageHeaderSize + 12 // after magic, version, page size
	metaFreelistAt   = pageHeaderSize + 32 // after magic, version, page size, flags, root bucket
	metaPagesAt      = pageHeaderSize + 40
	metaTxidAt       = pageHeaderSize + 48
	noFreelist       = 1<<64 - 1 // a meta page's free list when none is stored
	freelistOverflow = 0xFFFF    // a count this large is the first id's place, which holds it
)

// sumSince returns the sum of tx's pages from prev, the sum of the transaction before it,
// and the pages freed and allocated between them, read from f: the free lists of the two
// transactions, which the two meta pages name (bbolt writes transaction N's meta page at
// page N%2), tell which. A page freed by tx still holds what prev summed (bbolt frees a
// page by leaving it to a later commit), and one it allocated what tx wrote.
func sumSince(tx *bolt.Tx, f *os.File, prev sum) (sum, error) {
	size := int64(tx.DB().Info().PageSize)
	s := sum{txid: uint64(tx.ID()), pages: uint64(tx.Size() / size), total: prev.total}
	if prev.txid+1 != s.txid {
		return sum{}, errUnfollowed
	}
	buf := make([]byte, size)
	meta := func(txid uint64) (free map[uint64]bool, pages uint64, err error) {
		if _, err := f.ReadAt(buf, int64(txid%2)*size); err != nil {
			return nil, 0, err
		}
		if binary.LittleEndian.Uint32(buf[pageHeaderSize:]) != metaMagic || binary.LittleEndian.Uint64(buf[metaTxidAt:]) != txid {
			return nil, 0, errUnfollowed
		}
		list, pages := binary.LittleEndian.Uint64(buf[metaFreelistAt:]), binary.LittleEndian.Uint64(buf[metaPagesAt:])
		if list == noFreelist || list < 2 || list >= pages {
			return nil, 0, errUnfollowed
		}
		free, err = freeList(f, size, list, pages)
		return free, pages, err
	}
	oldFree, oldPages, err := meta(prev.txid)
	if err != nil {
		return sum{}, err
	}
	newFree, newPages, err := meta(s.txid)
	if err != nil {
		return sum{}, err
	}
	if oldPages != prev.pages || newPages != s.pages {
		return sum{}, errUnfollowed
	}
	hash := func(id uint64) (uint64, error) {
		if _, err := f.ReadAt(buf, int64(id)*size); err != nil {
			return 0, fmt.Errorf("read page %d of %d: %w", id, s.pages, err)
		}
		return pageHash(id, crc32.Checksum(buf, castagnoli())), nil
	}
	inUse := func(id, pages uint64, free map[uint64]bool) bool { return id >= 2 && id < pages && !free[id] }
	// Freed: in use before, not now; allocated: in use now, not before. Either was free
	// (or past the end) on one side, so the two free lists and the pages past the lower
	// end hold them all.
	var ids []uint64
	for id := range oldFree {
		ids = append(ids, id)
	}
	for id := range newFree {
		ids = append(ids, id)
	}
	for id := min(oldPages, newPages); id < max(oldPages, newPages); id++ {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		was, is := inUse(id, oldPages, oldFree), inUse(id, newPages, newFree)
		if was == is {
			continue
		}
		h, err := hash(id)
		if err != nil {
			return sum{}, err
		}
		if was {
			s.total -= h
		} else {
			s.total += h
		}
	}
	return s, nil
}

// freeList returns the ids of the free list stored at page list of a file of pages pages.
func freeList(f *os.File, size int64, list, pages uint64) (map[uint64]bool, error) {
	head := make([]byte, pageHeaderSize+8)
	if _, err := f.ReadAt(head, int64(list)*size); err != nil {
		return nil, err
	}
	flags, count := binary.LittleEndian.Uint16(head[8:]), uint64(binary.LittleEndian.Uint16(head[10:]))
	overflow := uint64(binary.LittleEndian.Uint32(head[12:]))
	if flags&freelistFlag == 0 || list+overflow >= pages {
		return nil, errUnfollowed
	}
	at := int64(pageHeaderSize)
	if count == freelistOverflow {
		count, at = binary.LittleEndian.Uint64(head[pageHeaderSize:]), at+8
	}
	if at+int64(count)*8 > int64(overflow+1)*size {
		return nil, errUnfollowed
	}
	b := make([]byte, count*8)
	if _, err := f.ReadAt(b, int64(list)*size+at); err != nil {
		return nil, err
	}
	free := make(map[uint64]bool, count)
	for i := range count {
		id := binary.LittleEndian.Uint64(b[i*8:])
		if id >= pages {
			return nil, errUnfollowed
		}
		free[id] = true
	}
	return free, nil
}

// fileID names a database file within this process's life: its device and inode.
type fileID struct{ dev, ino uint64 }

// known is a sum this process checked or wrote, and the file's change time then: a file
// changed since (by another process, or damaged) is checked again.
type known struct {
	sum   sum
	ctime unix.Timespec
}

// sums holds, for each database file of this process, the sum it last checked or wrote.
// A command opens a root's database more than once (several DBs: a read without the lock,
// the root's own): a later one trusts the sum an earlier one checked, where the file has
// not changed since, rather than read the file again, and a commit's sum follows from the
// one before it.
var sums sync.Map // fileID → known

// stat returns f's identity and change time.
func stat(f *os.File) (fileID, unix.Timespec, bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return fileID{}, unix.Timespec{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, st.Ctim, true
}

// check refuses b where it is older than its sum file says, or its pages differ from the
// sum of the same transaction. A file newer than its sum (a crash between a commit and
// its sum) is not checked: its next commit writes a sum again. A sum this process has
// checked or written already is not checked again.
func (d *DB) check(b *bolt.DB, f *os.File) error {
	rec, ok := d.readSum()
	if !ok {
		return nil
	}
	key, ctime, ok := stat(f)
	return d.protect(func() error {
		return b.View(func(tx *bolt.Tx) error {
			id := uint64(tx.ID())
			switch {
			case id < rec.txid:
				return d.damaged(&staleError{held: id, committed: rec.txid})
			case id > rec.txid:
				return nil
			}
			if k, found := sums.Load(key); ok && found && k.(known) == (known{rec, ctime}) {
				return nil
			}
			s, err := sumAll(tx, f)
			if err != nil {
				return d.damaged(err)
			}
			if s != rec {
				return d.damaged(errSum)
			}
			if ok {
				sums.Store(key, known{s, ctime})
			}
			return nil
		})
	})
}

// advance takes the sum of b's last commit, which d has just made, from the sum of the
// transaction before it where this process knows that one, else from every page (or is
// given it: sealed, the seal's), and writes it to the sum file if write. Where it cannot,
// the sum file keeps an older transaction, which checks nothing.
func (d *DB) advance(b *bolt.DB, f *os.File, write bool, sealed *sum) {
	key, ctime, ok := stat(f)
	var s sum
	err := d.protect(func() error {
		if sealed != nil {
			s = *sealed
			return nil
		}
		return b.View(func(tx *bolt.Tx) (err error) {
			if prev, found := sums.Load(key); ok && found {
				if s, err = sumSince(tx, f, prev.(known).sum); err == nil {
					return nil
				}
			}
			s, err = sumAll(tx, f)
			return err
		})
	})
	if err != nil {
		sums.Delete(key)
		return
	}
	if ok {
		sums.Store(key, known{s, ctime})
	}
	if !write {
		return
	}
	// Non-blocking: a FIFO in its place, with no reader, would hold the commit's command
	// in the open for ever; it fails (ENXIO) and the sum is not written, as readSum reads it.
	w, err := d.openFile(d.path+".sum", os.O_WRONLY|os.O_CREATE|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return
	}
	defer w.Close()
	w.WriteAt(s.encode(), 0)
}

// sealAt is where a seal is, in the first page of the file: just past the meta page that
// bbolt writes there, in the same 512-byte sector, which a disk writes whole or not at all.
const sealAt = pageHeaderSize + metaSize

const _ = uint(512 - sealAt - sumSize) // the seal ends within the first sector

// seal makes the first write transaction of a sealed database (create), b's last, durable
// with one fdatasync rather than bbolt's two: it writes the transaction's sum (sumAll)
// beside the meta page, in the first page (sealAt), and syncs the file; deferred, it
// writes the file back and waits, the caller's commit of the filesystem making it durable
// (PrefixChange.Sync). Open takes such a file, whose link a crash took, only where the
// seal is the sum of its pages (sealHolds).
// Why the meta page is then on the disk only with the renames logged before it (its page
// unwritten until now, sealedDatabase; carry): design.md, Commit protocol, after 8. It
// returns the sum, for advance; d.mu is held.
func (d *DB) seal(b *bolt.DB, f *os.File, deferred bool) (*sum, error) {
	// Tried once: where it fails, the file holds the transaction that a read sees, as a
	// failed fdatasync of bbolt's leaves one, and settle syncs it as it is.
	d.sealed = false
	var s sum
	err := d.protect(func() error {
		return b.View(func(tx *bolt.Tx) (err error) {
			s, err = sumAll(tx, f)
			return err
		})
	})
	if err == nil {
		_, err = f.WriteAt(s.encode(), sealAt)
	}
	if err == nil && testHookSealing != nil {
		err = testHookSealing(f)
	}
	switch {
	case err == nil && deferred: // the caller's commit of the filesystem makes it durable
		err = d.files().Wait(int(f.Fd()))
	case err == nil:
		err = unix.Fdatasync(int(f.Fd()))
	}
	if err != nil {
		return nil, &os.PathError{Op: "seal", Path: f.Name(), Err: err}
	}
	return &s, nil
}

// testHookSealing, where set, is called by seal with the file, its seal written and not
// yet synced; an error it returns is the sync's.
var testHookSealing func(f *os.File) error

// sealHolds reports whether f, a database file create made, may be taken for the commit
// its meta pages name: where that is the first commit of a sealed file (transaction 2, in
// the first page, flagged sealFlag), only if the seal beside it is the sum of the pages in
// use (seal); any other is bbolt's, which synced its pages before its meta page, or none.
// It reads the file itself, as sumSince does, so that pages a crash left unwritten are
// found before bbolt reads them.
func sealHolds(f *os.File) bool {
	b := make([]byte, sealAt+sumSize)
	if _, err := f.ReadAt(b, 0); err != nil {
		return true // bbolt's to refuse
	}
	ne := binary.NativeEndian
	m := b[pageHeaderSize:sealAt]
	if ne.Uint32(m) != metaMagic || ne.Uint64(m[metaSize-8:]) != metaSum(m) ||
		ne.Uint64(b[metaTxidAt:]) != 2 || ne.Uint32(b[metaFlagsAt:]) != sealFlag {
		return true
	}
	sealed, ok := decodeSum(b[sealAt:])
	size, list, pages := int64(ne.Uint32(m[8:])), ne.Uint64(b[metaFreelistAt:]), ne.Uint64(b[metaPagesAt:])
	if !ok || sealed.txid != 2 || sealed.pages != pages || size < 512 || size&(size-1) != 0 || list < 2 || list >= pages {
		return false
	}
	// The file holds every page the meta page names, which bounds what the free list read
	// may allocate: a meta page needs only its checksum to be believed.
	if st, err := f.Stat(); err != nil || pages > uint64(st.Size())/uint64(size) {
		return false
	}
	free, err := freeList(f, size, list, pages)
	if err != nil {
		return false
	}
	s := sum{txid: 2, pages: pages}
	err = s.addPages(f, size, func(id uint64) (bool, error) { return free[id], nil })
	return err == nil && s == sealed
}

// firstUnwritten reports whether the first page of f is allocated and unwritten
// (FIEMAP_EXTENT_UNWRITTEN), as create leaves a sealed file's.
func firstUnwritten(f *os.File) bool {
	var m fiemap.Map
	size, covered := uint64(os.Getpagesize()), uint64(0)
	err := m.Each(int(f.Fd()), 0, size, 0, func(e fiemap.Extent) bool {
		if e.Logical > covered || e.Flags&fiemap.ExtentUnwritten == 0 {
			return false
		}
		covered = e.Logical + e.Length
		return covered < size
	})
	return err == nil && covered >= size
}
