package db

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// commitBig commits one package of n files whose paths are as long as a kernel tree's.
func commitBig(tb testing.TB, d *DB, n int) {
	tb.Helper()
	files := make([]File, n)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("usr/src/linux/drivers/net/ethernet/vendor%03d/file%06d.c", i/1000, i), Type: '0', Mode: 0o644, Size: 1000}
	}
	l, err := d.WriteFiles(slices.Values(files))
	if err != nil {
		tb.Fatal(err)
	}
	if err := d.Commit([]*Record{{Name: "big", Version: "1"}}, []*FileList{l}, nil); err != nil {
		tb.Fatal(err)
	}
}

// TestDamagedPages flips a byte of every page of a database holding a long file list: each
// opening finds the damage (a *DamagedError about the file), or the page was free.
func TestDamagedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	commitBig(t, open(t, path), 20000)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	found := 0
	for p := 2; p < len(good)/page; p++ {
		b := slices.Clone(good)
		b[p*page+page/2] ^= 0x10
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := open(t, path).Files("big")
		var de *DamagedError
		switch {
		case errors.As(err, &de) && de.Path == path:
			found++
		case err != nil:
			t.Errorf("page %d flipped: %v, want nil or a *DamagedError", p, err)
		}
	}
	if found == 0 {
		t.Error("no flipped page found damaged")
	}
}

// TestCutShort cuts a database to less than its two meta pages, which bbolt refuses with
// an error of no type: each length is a *DamagedError about the file, read or written.
func TestCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	commitBig(t, open(t, path), 100)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	for _, n := range []int{1, 100, page / 2, page - 1, page, page + 1, page + page/2, 2*page - 1} {
		if err := os.WriteFile(path, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(path + ".sum")
		d := open(t, path)
		_, rerr := d.Get("big")
		werr := d.Commit([]*Record{{Name: "other", Version: "1"}}, nil, nil)
		for _, err := range []error{rerr, werr} {
			if de := (*DamagedError)(nil); !errors.As(err, &de) || de.Path != path {
				t.Errorf("cut to %d bytes: %v; want a *DamagedError about %s", n, err, path)
			}
		}
	}
}

// TestDamagedOpenClosesFile: an opening that bbolt's panic on a damaged page ends (here
// its free list, read by bolt.Open) closes the file, whose lock would stay held.
func TestDamagedOpenClosesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	commitBig(t, open(t, path), 2000)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	page, damaged := os.Getpagesize(), 0
	for p := 2; p < len(good)/page; p++ {
		b := slices.Clone(good)
		b[p*page+8] ^= 0xff // the page's flags
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		before := fds()
		_, err := open(t, path).Files("big")
		if errors.As(err, new(*DamagedError)) {
			damaged++
		}
		if after := fds(); after != before {
			t.Errorf("page %d damaged: %d descriptors open after %v, %d before", p, after, err, before)
		}
	}
	if damaged == 0 {
		t.Error("no damaged page refused")
	}
}

// BenchmarkCheck opens a database and reads a record: with its sum checked (the first
// opening of a command), and without a sum file (as before sums), for a root of a few
// packages and for one whose file lists take 10 MB (100,000 files of a kernel tree's path
// lengths).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100, 100000} {
		path := filepath.Join(b.TempDir(), "db")
		commitBig(b, open(b, path), n)
		for _, sum := range []bool{true, false} {
			b.Run(fmt.Sprintf("files=%d/sum=%v", n, sum), func(b *testing.B) {
				if !sum {
					os.Remove(path + ".sum")
				}
				for b.Loop() {
					if _, err := open(b, path).Get("big"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestSumFollowsCommits makes 150 commits of every kind a root's database sees (records,
// short and long file lists, some written ahead, deletions, intents, values that span
// several pages) and checks after each that the sum taken from the one before it and the
// pages the commit allocated and freed (sumSince) is the sum of every page, and that the
// sum file says so.
func TestSumFollowsCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	rng := rand.New(rand.NewPCG(1, 2))
	full := func() sum {
		b, err := d.open(true)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var s sum
		if err := b.View(func(tx *bolt.Tx) (err error) { s, err = sumAll(tx, d.file); return err }); err != nil {
			t.Fatal(err)
		}
		return s
	}
	prev := full()
	followed := 0
	for i := range 150 {
		name := fmt.Sprintf("p%d", rng.IntN(12))
		switch rng.IntN(4) {
		case 0:
			if err := d.Commit(nil, nil, []string{name}); err != nil && !errors.Is(err, ErrNotInstalled) {
				t.Fatal(err)
			}
		case 1:
			if err := d.SetIntents([]Intent{{Op: "install", Name: name, Staging: fmt.Sprintf(".pkg/staging/%s.%d", name, i), Inode: uint64(i)}}); err != nil {
				t.Fatal(err)
			}
		default:
			n := []int{1, 30, 3000, 60000}[rng.IntN(4)] // 60,000 files are written ahead
			files := make([]File, n)
			for j := range files {
				files[j] = File{Path: fmt.Sprintf("usr/share/%s/%07d-%d", name, j, i), Type: '0', Mode: 0o644, Size: int64(j)}
			}
			l, err := d.WriteFiles(slices.Values(files))
			if err != nil {
				t.Fatal(err)
			}
			summary := strings.Repeat("x", rng.IntN(3*4096)) // a record spanning pages
			if err := d.Commit([]*Record{{Name: name, Version: "1", Summary: summary}}, []*FileList{l}, nil); err != nil {
				t.Fatal(err)
			}
		}
		now := full()
		b, err := d.open(true)
		if err != nil {
			t.Fatal(err)
		}
		err = b.View(func(tx *bolt.Tx) error {
			if uint64(tx.ID()) != prev.txid+1 {
				return nil // written ahead: several transactions
			}
			s, err := sumSince(tx, d.file, prev)
			if err != nil {
				return fmt.Errorf("commit %d: %w", i, err)
			}
			if s != now {
				return fmt.Errorf("commit %d: sum from the last one %+v, of every page %+v", i, s, now)
			}
			followed++
			return nil
		})
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rec, ok := d.readSum(); !ok || rec != now {
			t.Fatalf("commit %d: sum file %+v (%v), want %+v", i, rec, ok, now)
		}
		prev = now
	}
	if followed < 50 {
		t.Errorf("only %d of 150 commits followed the one before", followed)
	}
}

// TestAddPagesLargePages: pages past addPages' 64 KiB buffer, as a meta page may name
// (sealHolds reads its size from the file, before bbolt), are summed, not looped on.
func TestAddPagesLargePages(t *testing.T) {
	const size = 128 << 10
	f, err := os.Create(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(4 * size); err != nil {
		t.Fatal(err)
	}
	s := sum{pages: 4}
	if err := returnsWithin(t, 5*time.Second, "addPages of 128 KiB pages", func() error {
		return s.addPages(f, size, func(uint64) (bool, error) { return false, nil })
	}); err != nil {
		t.Fatal(err)
	}
}

// returnsWithin returns what fn, run on a goroutine, returns, and fails t where it has
// not returned within limit.
func returnsWithin(t *testing.T, limit time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s: still blocked after %v", what, limit)
		return nil
	}
}

// TestSumFIFO: a FIFO in the place of the sum file, with no reader, does not hold a
// commit: the sum is not written, and the commit is there.
func TestSumFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	commitEmpty(t, d, "a")
	if err := os.Remove(path + ".sum"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(path+".sum", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := returnsWithin(t, 10*time.Second, "a commit with a FIFO in the sum file's place", func() error {
		return d.Commit([]*Record{{Name: "b", Version: "1"}}, []*FileList{writeFiles(t, d, nil)}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if ps, err := d.List(); err != nil || len(ps) != 2 {
		t.Errorf("List = %d records, %v; want 2", len(ps), err)
	}
}
