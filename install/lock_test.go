package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/testfs"
)

// TestReadOwnerQuotesControl: a holder another user wrote into their root's lock is said
// on one line, quoted, not as the lines it holds.
func TestReadOwnerQuotesControl(t *testing.T) {
	for _, c := range []struct{ wrote, want string }{
		{"pid 7 (pkg install a)\n", "pid 7 (pkg install a)"},
		{"pid 7\npkg: error: fake", `"pid 7\npkg: error: fake"`},
		{"\x1b]0;title\x07", `"\u001b]0;title\u0007"`},
		{"", "another pkg process"},
	} {
		name := filepath.Join(t.TempDir(), "lock")
		if err := os.WriteFile(name, []byte(c.wrote), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := readOwner(f); got != c.want {
			t.Errorf("readOwner of %q = %s, want %s", c.wrote, got, c.want)
		}
		f.Close()
	}
}

// newerDatabase makes root's database one a newer pkg marked with format 99, which Open
// and Rebuild refuse (*db.FormatError) once they hold the lock.
func newerDatabase(t *testing.T, root string) {
	t.Helper()
	r, err := Open(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	testfs.MarkFormat(t, filepath.Join(root, ".pkg", "db"), 99)
}

// TestFailedOpenEmptiesLock: Open and Rebuild that fail once they hold the lock empty the
// holder's line they wrote in it, as Close does (formats.md: emptied on release), and one
// that never held it leaves the holder's line as it is.
func TestFailedOpenEmptiesLock(t *testing.T) {
	root := t.TempDir()
	lock := filepath.Join(root, ".pkg", "lock")
	newerDatabase(t, root)
	o := Options{Owner: "pkg install a"}
	for what, open := range map[string]func() error{
		"Open": func() error { _, err := Open(context.Background(), root, o); return err },
		"Rebuild": func() error {
			_, err := Rebuild(context.Background(), root, o, func(string) ([]Candidate, error) { return nil, nil })
			return err
		},
	} {
		if err := open(); !errors.As(err, new(*db.FormatError)) {
			t.Fatalf("%s of a newer database = %v; want a *db.FormatError", what, err)
		}
		if got, err := os.ReadFile(lock); err != nil || len(got) != 0 {
			t.Errorf("%s that failed left the lock holding %q (%v); want it empty", what, got, err)
		}
	}

	other, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	const holder = "pid 1 (pkg remove b)"
	if err := other.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := other.WriteString(holder); err != nil {
		t.Fatal(err)
	}
	o.LockTimeout = time.Millisecond
	if _, err := Open(context.Background(), root, o); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open of a root another holds = %v; want ErrLocked", err)
	}
	if got, err := os.ReadFile(lock); err != nil || string(got) != holder {
		t.Errorf("Open that waited in vain left the lock holding %q (%v); want %q", got, err, holder)
	}
}
