package fetch

import (
	"archive/tar"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
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
	src := quick(t, dir)
	open := cacheOpener(t)
	c := open()
	// Another boot's log, this boot's as named before each user kept one, which nothing
	// reads, and another user's of this boot.
	other := filepath.Join(c.dir, checkLogPrefix+"00000000-0000-0000-0000-000000000000")
	unread := filepath.Join(c.dir, checkLogPrefix+bootID())
	another := filepath.Join(c.dir, checkLogPrefix+bootID()+".65533")
	for _, name := range []string{other, unread, another} {
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
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
	for _, name := range []string{other, unread} {
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("log %s: %v, want it removed with this boot's made", filepath.Base(name), err)
		}
	}
	if _, err := os.Stat(another); err != nil {
		t.Errorf("another user's log of this boot: %v, want it kept", err)
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
// TestRecordChecks: a command that changes nothing records its passed checks by a Settle
// of no entry, and a later Cache then reads no tar for the entry.
func TestRecordChecks(t *testing.T) {
	if checkLogName() == "" {
		t.Skip("no boot id: no check log")
	}
	dir, p := localRepo(t)
	open := cacheOpener(t)
	if err := fetchOne(open(), quick(t, dir), p); err != nil {
		t.Fatal(err)
	}
	later := checkNow
	checkNow = func() time.Time { return later().Add(time.Hour) }
	t.Cleanup(func() { checkNow = later })
	c := open()
	if _, err := c.Members(p.SHA256); err != nil {
		t.Fatal(err)
	}
	if err := c.Settle(); err != nil {
		t.Fatal(err)
	}
	c = open()
	c.checks.open(c)
	if _, ok := c.checks.seen[p.SHA256]; !ok {
		t.Errorf("after Members and a Settle of no entry: the entry not recorded as checked")
	}
}

// nor is written to: every entry is then checked, and nothing recorded.
func TestCheckLogFIFO(t *testing.T) {
	if checkLogName() == "" {
		t.Skip("no boot id: no check log")
	}
	dir, p := localRepo(t)
	src := quick(t, dir)
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

// TestCheckLogUsers: a cache that a user and root share (sudo pkg with the user's cache):
// each keeps a log of their own, so that root's log, which the user cannot append to,
// does not keep the user's checks from being recorded; and a log in one's own name that
// another user owns is not taken on their word. As root, the test runs itself as nobody
// (PKG_TEST_CHECK_CACHE) on the cache it gave nobody.
func TestCheckLogUsers(t *testing.T) {
	if checkLogName() == "" {
		t.Skip("no boot id: no check log")
	}
	later := checkNow
	checkNow = func() time.Time { return later().Add(time.Hour) }
	t.Cleanup(func() { checkNow = later })
	if dir := os.Getenv("PKG_TEST_CHECK_CACHE"); dir != "" {
		sha := os.Getenv("PKG_TEST_CHECK_SHA")
		open := func() *Cache {
			c, err := OpenCache(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
		c := open()
		if _, err := c.Members(sha); err != nil {
			t.Fatal(err)
		}
		if err := c.Settle(sha); err != nil {
			t.Fatal(err)
		}
		c = open()
		tar, err1 := statAt(c.tars, tarName(sha))
		idx, err2 := statAt(c.tars, idxName(sha))
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if !c.checks.passed(c, sha, checkedFiles{idOf(tar), idOf(idx)}) {
			t.Errorf("as uid %d, after a check and Settle: the entry not recorded as checked", os.Geteuid())
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("run by root, as nobody")
	}
	testfs.NeedTools(t, "setpriv")
	dir, p := localRepo(t)
	src := quick(t, dir)
	base := t.TempDir()
	searchable(t, base)
	// The user's cache, holding an entry, which root then uses, recording its check.
	cache := filepath.Join(base, "cache")
	c, err := OpenCache(t.Context(), cache)
	if err != nil {
		t.Fatal(err)
	}
	err = fetchOne(c, src, p)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(cache, func(path string, _ fs.DirEntry, err error) error {
		return errors.Join(err, os.Lchown(path, 65534, 65534))
	}); err != nil {
		t.Fatal(err)
	}
	if c, err = OpenCache(t.Context(), cache); err != nil {
		t.Fatal(err)
	}
	if _, err = c.Members(p.SHA256); err == nil {
		err = c.Settle(p.SHA256)
	}
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(cache, checkLogName())
	if _, err := os.Stat(log); err != nil {
		t.Fatalf("root's log: %v", err)
	}

	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "PKG_TEST_CHECK_CACHE="+cache, "PKG_TEST_CHECK_SHA="+p.SHA256)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Errorf("as nobody: %v\n%s", err, out)
	}

	// Root's log, given to nobody with a line for the tar as it is once damaged.
	c, err = OpenCache(t.Context(), cache)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ms, err := c.Members(p.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(c.Path(p.SHA256), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Type == tar.TypeReg && m.Size > 0 {
			_, err = f.WriteAt([]byte{^firstByte(t, f, m.Offset)}, m.Offset)
			break
		}
	}
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	tarInfo, err1 := os.Stat(c.Path(p.SHA256))
	idxInfo, err2 := os.Stat(c.idxPath(p.SHA256))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	forged := p.SHA256 + " " + idOf(tarInfo).String() + " " + idOf(idxInfo).String() + "\n"
	if err := errors.Join(os.WriteFile(log, []byte(forged), 0o644), os.Chown(log, 65534, 65534)); err != nil {
		t.Fatal(err)
	}
	c2, err := OpenCache(t.Context(), cache)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Members(p.SHA256); !errors.Is(err, ErrDamaged) {
		t.Errorf("Members of a damaged entry that a log in root's name but nobody's records: %v, want ErrDamaged", err)
	}
}

// firstByte returns the byte of f at off.
func firstByte(t *testing.T, f *os.File, off int64) byte {
	t.Helper()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b[0]
}

// searchable lets other users reach dir: it and the directories above it that others may
// not search (t.TempDir's are private to root) are made so, their other bits kept (a
// chmod 0755 of each took /tmp's sticky bit and its write for all).
func searchable(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err == nil && info.Mode().Perm()&0o005 != 0o005 {
			err = os.Chmod(d, info.Mode()|0o055)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchable: searchable opens the directories others may not search and leaves
// the others as they are, a sticky /tmp among them.
func TestSearchable(t *testing.T) {
	top := filepath.Join(t.TempDir(), "tmp")
	dir := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(top, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	searchable(t, dir)
	for d, want := range map[string]fs.FileMode{top: 0o777 | fs.ModeSticky, filepath.Dir(dir): 0o755, dir: 0o755} {
		if info, err := os.Stat(d); err != nil || info.Mode()&^fs.ModeDir != want {
			t.Errorf("%s after searchable: %v (%v), want %v", d, info.Mode(), err, want)
		}
	}
}

// TestCheckLogNotRegular puts a symlink to a copy of an entry's tar, a FIFO and a directory
// in the tar's place and forges the log's record to name what is there now: Members, which
// looks at a logged entry's tar without opening it, still refuses it as not a regular file.
func TestCheckLogNotRegular(t *testing.T) {
	if checkLogName() == "" {
		t.Skip("no boot id: no check log")
	}
	dir, p := localRepo(t)
	src := quick(t, dir)
	for _, nf := range notFiles {
		t.Run(nf.name, func(t *testing.T) {
			open := cacheOpener(t)
			c := open()
			path, _, _ := replaceTar(t, c, src, p, nf.put)
			tarInfo, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := os.Lstat(c.idxPath(p.SHA256))
			if err != nil {
				t.Fatal(err)
			}
			forged := p.SHA256 + " " + idOf(tarInfo).String() + " " + idOf(idx).String() + "\n"
			if err := os.WriteFile(filepath.Join(c.dir, checkLogName()), []byte(forged), 0o644); err != nil {
				t.Fatal(err)
			}
			c.Close()
			c = open()
			wantNotRegular(t, c, src, p, "a "+nf.name+" for its tar, logged as checked")
		})
	}
}
