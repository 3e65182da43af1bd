package fetch

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCheckLog: a spot check that passed is recorded for the boot once the change commits
// (Settle), and a later Cache uses
// the entry without reading its tar again while the tar and index are as recorded; a
// change of the tar makes it checked (and found damaged) again; a file changed within
// checkSettle is not recorded (and no log made for it); the logs of other boots go when
// this boot's is made.
func TestCheckLog(t *testing.T) {
	if checkLogName() == "" {
		t.Skip("no boot id: no check log")
	}
	dir, p := localRepo(t)
	src, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	open := cacheOpener(t)
	c := open()
	other := filepath.Join(c.dir, checkLogPrefix+"00000000-0000-0000-0000-000000000000")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(c.dir, checkLogName())
	lines := func() []string {
		b, _ := os.ReadFile(log)
		return strings.Fields(strings.ReplaceAll(string(b), "\n", " "))
	}

	c = open()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatal(err)
	}
	c.Settle(p.SHA256)
	if _, err := os.Stat(log); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("log after checking an entry written just now: %v, want none made", err)
	}

	later := checkNow
	checkNow = func() time.Time { return later().Add(time.Hour) }
	t.Cleanup(func() { checkNow = later })
	c = open()
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(); len(got) != 0 {
		t.Errorf("log before the change committed: %q, want nothing recorded", got)
	}
	c.Settle(p.SHA256)
	if got := lines(); len(got) != 3 || got[0] != p.SHA256 {
		t.Fatalf("log after a check: %q, want the entry", got)
	}
	recorded, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("another boot's log: %v, want it removed with this boot's made", err)
	}
	var first int64 = -1
	for _, m := range ms {
		if m.Type == tar.TypeReg && m.Size > 0 {
			first = m.Offset
			break
		}
	}
	damage := func() {
		f, err := os.OpenFile(c.Path(p.SHA256), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, first); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 1
		if _, err := f.WriteAt(b, first); err != nil {
			t.Fatal(err)
		}
	}

	// A record of the tar and index as they are now: the data are not read.
	damage()
	info, err := os.Stat(c.Path(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.Stat(c.idxPath(p.SHA256))
	if err != nil {
		t.Fatal(err)
	}
	forged := p.SHA256 + " " + idOf(info).String() + " " + idOf(idx).String() + "\n"
	if err := os.WriteFile(log, []byte("cut short\n"+forged+"and half a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := open().Members(p.SHA256); err != nil {
		t.Errorf("Members of an entry recorded as it is: %v, want it used unread", err)
	}

	// The record of the tar before the change: checked again.
	if err := os.WriteFile(log, recorded, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := open().Members(p.SHA256); !errors.Is(err, ErrDamaged) {
		t.Errorf("Members of an entry changed since its record: %v, want ErrDamaged", err)
	}
}

// TestCheckLogFIFO: a FIFO put where this boot's check log goes neither blocks the cache
// nor is written to: every entry is then checked, and nothing recorded.
func TestCheckLogFIFO(t *testing.T) {
	if checkLogName() == "" {
		t.Skip("no boot id: no check log")
	}
	dir, p := localRepo(t)
	src, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	open := cacheOpener(t)
	c := open()
	if err := fetchOne(c, src, p); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(c.dir, checkLogName())
	os.Remove(log)
	if err := unix.Mkfifo(log, 0o644); err != nil {
		t.Fatal(err)
	}
	later := checkNow
	checkNow = func() time.Time { return later().Add(time.Hour) }
	t.Cleanup(func() { checkNow = later })
	done := make(chan error, 1)
	go func() {
		c := open()
		_, err := c.Members(p.SHA256)
		c.Settle(p.SHA256)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Members and Settle with a FIFO as the check log: still blocked after 30 s")
	}
	if info, err := os.Lstat(log); err != nil || info.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the FIFO in the log's place: %v (%v), want it left as it was", info, err)
	}
}
