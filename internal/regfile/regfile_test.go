package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpen: every kind of file but a regular one is refused at once, naming its path and
// what it is; a FIFO with no writer does not block the open.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("regular", link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		flag int
		want fs.FileMode // 0: opened
	}{
		{regular, 0, 0},
		{link, 0, 0},
		{link, unix.O_NOFOLLOW, fs.ModeSymlink},
		{fifo, 0, fs.ModeNamedPipe},
		{fifo, unix.O_NOFOLLOW, fs.ModeNamedPipe},
		{dir, 0, fs.ModeDir},
		{"/dev/null", 0, fs.ModeDevice | fs.ModeCharDevice},
	}
	for _, tt := range tests {
		timer := time.AfterFunc(5*time.Second, func() { panic("Open(" + tt.name + ") still blocked after 5 s") })
		f, err := Open(tt.name, tt.flag)
		timer.Stop()
		var nr *NotRegularError
		var pe *fs.PathError
		switch {
		case tt.want == 0 && err != nil:
			t.Errorf("Open(%s, %#x): %v", tt.name, tt.flag, err)
		case tt.want == 0:
			f.Close()
		case !errors.As(err, &nr) || nr.Type != tt.want || !errors.As(err, &pe) || pe.Path != tt.name:
			t.Errorf("Open(%s, %#x) = %v; want a *NotRegularError of type %v naming the path", tt.name, tt.flag, err, tt.want)
		case !strings.Contains(err.Error(), typeName(tt.want)):
			t.Errorf("Open(%s): %q does not say it is %s", tt.name, err, typeName(tt.want))
		}
	}
}

func TestReadFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(name, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile at the limit = %q, %v", b, err)
	}
	var pe *fs.PathError
	if _, err := ReadFile(name, 4); !errors.As(err, &pe) || pe.Path != name {
		t.Errorf("ReadFile over the limit: %v; want a *fs.PathError naming the file", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none"), 4); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of nothing: %v; want fs.ErrNotExist", err)
	}
}
