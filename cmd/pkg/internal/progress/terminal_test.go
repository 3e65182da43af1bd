package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/txn"
)

// openPTY returns the two ends of a new pseudo-terminal: what is written to tty is read
// from pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	pty = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { pty.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return pty, tty
}

// TestBarsTerm: on a terminal, through the termtext.Writer that pkg's output goes
// through, a download draws a bar that moves the cursor, unless TERM is dumb: then it
// gets the line it gets off a terminal, and nothing moves the cursor. A note's escapes
// are not printed raw, above the bars or not.
func TestBarsTerm(t *testing.T) {
	p := repo.Package{Name: "hello", Version: "1.2.0", Size: 2 << 20, SHA256: "ab"}
	for _, tt := range []struct {
		term string
		bars bool
	}{
		{"xterm-256color", true},
		{"dumb", false},
	} {
		t.Setenv("TERM", tt.term)
		pty, tty := openPTY(t)
		r := New(termtext.NewWriter(tty), termtext.NewWriter(tty), Options{NotePrefix: "note: "})
		r.During([]repo.Package{p}, func() error {
			if w := r.Fetching(p); (w != nil) != tt.bars {
				t.Errorf("TERM=%s: Fetching returned a bar: %v, want %v", tt.term, w != nil, tt.bars)
			} else if w != nil {
				w.Write(make([]byte, 1<<20))
			}
			r.Note("over the bars \x1b]0;title\a")
			r.Fetched(txn.Fetched{Package: p, Elapsed: time.Second})
			return nil
		})
		tty.Close()
		out, _ := io.ReadAll(pty) // ends with EIO once the terminal's last writer closed it
		if got := bytes.Contains(out, []byte("\x1b[")); got != tt.bars {
			t.Errorf("TERM=%s: cursor escapes %v, want %v, in %q", tt.term, got, tt.bars, out)
		}
		if bytes.Contains(out, []byte("\x1b]")) || bytes.Contains(out, []byte("\a")) {
			t.Errorf("TERM=%s: a note's escape printed raw in %q", tt.term, out)
		}
		if !bytes.Contains(out, []byte("fetched hello 1.2.0")) {
			t.Errorf("TERM=%s: %q does not say what was fetched", tt.term, out)
		}
	}
}
