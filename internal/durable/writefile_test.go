package durable

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFile replaces a file, readable by all, and leaves it and the directory as they
// were when the writer fails.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "index.json")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(dir, "index.json", ".index.json.tmp-*", func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("a failed write: %v, want its error", err)
	}
	if b, _ := os.ReadFile(name); string(b) != "old" {
		t.Errorf("a failed write left %q, want the old file", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a failed write left %d files, want the old one alone", len(ents))
	}
	if err := WriteFile(dir, "index.json", ".index.json.tmp-*", func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if b, _ := os.ReadFile(name); string(b) != "new" || err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file is %q, mode %v, want \"new\", 0644", b, fi.Mode())
	}
}

// TestReplaceFile keeps the permissions of the file it replaces, whatever they are, and
// makes a new file 0644.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }
	for _, mode := range []os.FileMode{0o600, 0o664, 0o640} {
		name := filepath.Join(dir, "pkg.lock")
		if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
		if err := ReplaceFile(dir, "pkg.lock", ".pkg.lock.tmp-*", write); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("a file of mode %v replaced: %v, %v", mode, fi.Mode(), err)
		}
	}
	if err := ReplaceFile(dir, "new.lock", ".new.lock.tmp-*", write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "new.lock")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file: %v, %v; want 0644", fi.Mode(), err)
	}
}
