package dirfd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTouchNotOwner touches, as another user with write access to it, a file root owns:
// Touch sets its times to now, where explicit times (what unix.Futimes sets) are refused.
// The other user is this goroutine's thread's alone (a raw setresuid, undone after).
func TestTouchNotOwner(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to act as another user: CI runs as root")
		}
		t.Skip("not root: cannot act as another user")
	}
	path := filepath.Join(t.TempDir(), "stamp")
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := errors.Join(os.Chmod(path, 0o666), os.Chtimes(path, old, old)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	explicit := [2]unix.Timespec{unix.NsecToTimespec(time.Now().UnixNano()), unix.NsecToTimespec(time.Now().UnixNano())}
	var touched, refused error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // not unlocked: the thread goes when the goroutine ends
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, ^uintptr(0), 65534, ^uintptr(0)); e != 0 {
			touched = e
			return
		}
		refused = Futimens(int(f.Fd()), &explicit)
		touched = Touch(f)
	}()
	<-done
	if !errors.Is(refused, unix.EPERM) {
		t.Errorf("explicit times as another user: %v, want EPERM (the test acts as no other user)", refused)
	}
	info, err := os.Stat(path)
	if touched != nil || err != nil || !info.ModTime().After(old) {
		t.Errorf("Touch as another user: %v; mtime %v, want after %v (%v)", touched, info.ModTime(), old, err)
	}
}

// TestLstat looks at names of a directory after another took its path: Lstat reads the
// directory as opened, a symlink as itself, and names a missing file as Open does.
func TestLstat(t *testing.T) { checkLstat(t) }

// TestLstatWithoutProc runs TestLstat's checks in a mount namespace without /proc, as a
// container may run pkg: Lstat needs none (a path through /proc/self/fd failed there,
// and the cache's claim of an entry retried it for ever).
func TestLstatWithoutProc(t *testing.T) {
	if os.Getenv("PKG_NO_PROC") != "" { // the child, /proc unmounted
		if _, err := os.Stat("/proc/self"); err == nil {
			t.Fatal("/proc is still mounted")
		}
		checkLstat(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("unmounting /proc in a mount namespace of its own needs root")
	}
	cmd := exec.Command("unshare", "-m", "sh", "-c", `umount -l /proc && exec "$0" -test.run='^TestLstatWithoutProc$' -test.count=1 -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "PKG_NO_PROC=1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Errorf("without /proc: %v\n%s", err, out)
	}
}

func checkLstat(t *testing.T) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = errors.Join(os.WriteFile(filepath.Join(dir, "f"), []byte("abc"), 0o644),
		os.Symlink("f", filepath.Join(dir, "l")),
		os.Rename(dir, filepath.Join(base, "moved")),
		os.Mkdir(dir, 0o755), os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := Lstat(d, "f"); err != nil || !info.Mode().IsRegular() || info.Size() != 3 || info.Name() != "f" {
		t.Errorf("Lstat f: %v, %v; want the moved directory's regular file of 3 bytes", info, err)
	}
	if info, err := Lstat(d, "l"); err != nil || info.Mode().Type() != os.ModeSymlink {
		t.Errorf("Lstat l: %v, %v; want a symlink", info, err)
	}
	_, err = Lstat(d, "gone")
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "gone") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Lstat gone: %v; want a not-exist *os.PathError naming %s", err, filepath.Join(dir, "gone"))
	}
}
