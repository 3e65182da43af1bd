package fetch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRelativeCacheRoots: a cache opened by a relative path through a symlink records a run
// root reached through its run directory by an absolute path, which Roots lists and
// ForgetRoot forgets.
func TestRelativeCacheRoots(t *testing.T) {
	base := t.TempDir()
	if err := os.Symlink(filepath.Join(base, "cache"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	c, err := OpenCache(context.Background(), "./link")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd, err := c.RunDir()
	if err != nil {
		t.Fatal(err)
	}
	const set = "0123456789abcdef0123456789abcdef"
	if err := c.AddRoot(filepath.Join(rd.Path, set)); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(base, "link", "run", set)
	if roots, err := c.Roots(); err != nil || !slices.Equal(roots, []string{want}) {
		t.Fatalf("Roots() = %q, %v; want %q", roots, err, want)
	}
	if err := c.ForgetRoot(want); err != nil {
		t.Fatal(err)
	}
	if roots, err := c.Roots(); err != nil || len(roots) != 0 {
		t.Errorf("Roots() after ForgetRoot = %q, %v; want none", roots, err)
	}
}
