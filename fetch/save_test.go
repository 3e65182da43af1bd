package fetch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSaveArchive writes an archive into a mirror directory, keeps it when it is there,
// replaces a file that is not it, and leaves nothing of a download that does not match.
func TestSaveArchive(t *testing.T) {
	dir, p := localRepo(t)
	archive, _ := os.ReadFile(filepath.Join(dir, p.Archive))
	s := quick(t, dir)
	out := t.TempDir()
	name := filepath.Join(out, "sha256", p.SHA256)
	for i, want := range []bool{true, false} {
		wrote, err := s.SaveArchive(t.Context(), p, out, nil)
		if err != nil || wrote != want {
			t.Fatalf("save %d: wrote %v, %v; want %v", i, wrote, err, want)
		}
	}
	if got, _ := os.ReadFile(name); !bytes.Equal(got, archive) {
		t.Fatal("the saved file is not the archive")
	}
	if info, _ := os.Stat(name); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	os.WriteFile(name, archive[:10], 0o644)
	if wrote, err := s.SaveArchive(t.Context(), p, out, nil); err != nil || !wrote {
		t.Fatalf("a cut file: wrote %v, %v; want it replaced", wrote, err)
	}
	bad := p
	bad.SHA256 = "00" + p.SHA256[2:]
	if _, err := s.SaveArchive(t.Context(), bad, out, nil); !errors.Is(err, ErrMismatch) {
		t.Fatalf("an archive of another sha256: %v, want ErrMismatch", err)
	}
	ents, _ := os.ReadDir(filepath.Join(out, "sha256"))
	if len(ents) != 1 {
		t.Errorf("%d files in sha256/, want only the archive", len(ents))
	}
}
