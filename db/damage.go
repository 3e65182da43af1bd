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

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// DamagedError is returned for a database file that cannot be trusted: bbolt cannot read
// it, its pages are not those its last commit left, or it holds an older transaction than
// the last one committed (bbolt fell back to its other meta page, or the file was replaced
// by an older copy). Nothing may be undone or deleted on the strength of what it records.
type DamagedError struct {
	Path string // the database file
	Err  error
}

func (e *DamagedError) Error() string { return fmt.Sprintf("db: %s is damaged: %v", e.Path, e.Err) }
func (e *DamagedError) Unwrap() error { return e.Err }

var (
	// ErrStale is a DamagedError's cause for a file older than its last commit.
	ErrStale = errors.New("db: database older than its last commit")
	errSum   = errors.New("pages differ from those the last commit left")
	errEmpty = errors.New("empty file")
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
// the database's pages then, and a CRC-32C of the pages in use but the two meta pages
// (which bbolt checks itself, and whose other one the next commit rewrites). It is
// written after each commit, without a sync: a crash may leave an older sum, which says
// nothing of a newer file, never a newer sum, which would call a good file damaged. The
// pages a commit cut short writes were free in the transaction before it, so a sum stays
// true of its file until the next commit.
type sum struct {
	txid, pages uint64
	crc         uint32
}

const (
	sumMagic = "pkgsum1\n"
	sumSize  = len(sumMagic) + 8 + 8 + 4 + 4 // magic, txid, pages, crc, CRC-32C of the rest
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s sum) encode() []byte {
	b := append([]byte(sumMagic), make([]byte, sumSize-len(sumMagic))...)
	binary.BigEndian.PutUint64(b[8:], s.txid)
	binary.BigEndian.PutUint64(b[16:], s.pages)
	binary.BigEndian.PutUint32(b[24:], s.crc)
	binary.BigEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	return b
}

// readSum returns d's sum file, false where there is none or it is not whole (cut short
// by a crash, or from before sums).
func (d *DB) readSum() (sum, bool) {
	f, err := d.openFile(d.path+".sum", os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return sum{}, false
	}
	defer f.Close()
	b := make([]byte, sumSize+1)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	if n != sumSize || !bytes.HasPrefix(b, []byte(sumMagic)) ||
		binary.BigEndian.Uint32(b[28:]) != crc32.Checksum(b[:28], castagnoli) {
		return sum{}, false
	}
	return sum{txid: binary.BigEndian.Uint64(b[8:]), pages: binary.BigEndian.Uint64(b[16:]), crc: binary.BigEndian.Uint32(b[24:])}, true
}

// sumOf returns the sum of tx's pages, read from f, the database file.
func (d *DB) sumOf(tx *bolt.Tx, f *os.File) (sum, error) {
	size := int64(tx.DB().Info().PageSize)
	s := sum{txid: uint64(tx.ID()), pages: uint64(tx.Size() / size)}
	h := crc32.New(castagnoli)
	buf := make([]byte, 64<<10)
	from := int64(2) // the first page of the run of pages in use being summed
	flush := func(to int64) error {
		if to == from {
			return nil
		}
		n, err := io.CopyBuffer(h, io.NewSectionReader(f, from*size, (to-from)*size), buf)
		if err == nil && n != (to-from)*size {
			err = fmt.Errorf("file ends at page %d of %d", (from*size+n)/size, s.pages)
		}
		return err
	}
	for id := from; id < int64(s.pages); id++ {
		info, err := tx.Page(int(id))
		if err != nil {
			return sum{}, err
		}
		if info.Type != "free" {
			continue
		}
		if err := flush(id); err != nil {
			return sum{}, err
		}
		from = id + 1
	}
	if err := flush(int64(s.pages)); err != nil {
		return sum{}, err
	}
	s.crc = h.Sum32()
	return s, nil
}

// check refuses b where it is older than its sum file says, or its pages differ from the
// sum of the same transaction. A file newer than its sum (a crash between a commit and
// its sum) is not checked: its next commit writes a sum again.
func (d *DB) check(b *bolt.DB, f *os.File) error {
	rec, ok := d.readSum()
	if !ok {
		return nil
	}
	return d.protect(func() error {
		return b.View(func(tx *bolt.Tx) error {
			id := uint64(tx.ID())
			switch {
			case id < rec.txid:
				return d.damaged(&staleError{held: id, committed: rec.txid})
			case id > rec.txid || id == d.checked:
				return nil
			}
			s, err := d.sumOf(tx, f)
			if err != nil {
				return d.damaged(err)
			}
			if s != rec {
				return d.damaged(errSum)
			}
			d.checked = id
			return nil
		})
	})
}

// writeSum writes the sum of b's last commit, which d has just made, and takes it as
// checked. Where it cannot, the sum file keeps an older transaction, which checks nothing.
func (d *DB) writeSum(b *bolt.DB, f *os.File) {
	var s sum
	err := d.protect(func() error {
		return b.View(func(tx *bolt.Tx) (err error) {
			s, err = d.sumOf(tx, f)
			return err
		})
	})
	if err != nil {
		return
	}
	w, err := d.openFile(d.path+".sum", os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer w.Close()
	if _, err := w.WriteAt(s.encode(), 0); err == nil {
		d.checked = s.txid
	}
}
