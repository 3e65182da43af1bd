package dirfd

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
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
