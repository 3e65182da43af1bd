package xdg

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got := Dir("XDG_CACHE_HOME", ".cache"); got != "/x/cache/pkg" {
		t.Errorf("Dir with XDG_CACHE_HOME set = %q, want /x/cache/pkg", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := Dir("XDG_CACHE_HOME", ".cache"); got != "/home/u/.cache/pkg" {
		t.Errorf("Dir with XDG_CACHE_HOME empty = %q, want /home/u/.cache/pkg", got)
	}
	t.Setenv("HOME", "")
	if got := Dir("XDG_CACHE_HOME", ".cache"); got != filepath.Join(os.TempDir(), "pkg") {
		t.Errorf("Dir without a home = %q, want pkg in %s", got, os.TempDir())
	}
}
