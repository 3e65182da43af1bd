package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnPath checks which paths of a file a command may be run by: those only this user
// and root can make name another file.
func TestOwnPath(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dir string) // dir holds pkgs/x/bin/x, the file
		path  string                         // relative to dir
		want  bool
	}{
		{"own", nil, "pkgs/x/bin/x", true},
		{"through links", func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "bin"), 0o755)
			symlink(t, "../pkgs/x/bin/x", filepath.Join(dir, "bin", "x"))
		}, "bin/x", true},
		{"absolute link", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(dir, "pkgs"), filepath.Join(dir, "abs"))
		}, "abs/x/bin/../bin/x", true},
		{"group-writable", func(t *testing.T, dir string) { chmod(t, filepath.Join(dir, "pkgs"), 0o775) }, "pkgs/x/bin/x", false},
		{"writable by all", func(t *testing.T, dir string) { chmod(t, filepath.Join(dir, "pkgs", "x"), 0o777) }, "pkgs/x/bin/x", false},
		{"sticky", func(t *testing.T, dir string) { chmod(t, filepath.Join(dir, "pkgs"), os.ModeSticky|0o777) }, "pkgs/x/bin/x", true},
		{"link in a writable directory", func(t *testing.T, dir string) {
			mkdir(t, filepath.Join(dir, "bin"), 0o777)
			symlink(t, "../pkgs/x/bin/x", filepath.Join(dir, "bin", "x"))
		}, "bin/x", false},
		{"another file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "y"), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "y", false},
		{"relative", nil, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "pkgs", "x", "bin", "x")
			mkdir(t, filepath.Dir(file), 0o755)
			if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			path := filepath.Join(dir, tt.path)
			if tt.path == "" {
				path = "pkgs/x/bin/x"
			}
			if got := ownPath(path, f); got != tt.want {
				t.Errorf("ownPath(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestOwnPathOthers: a directory of another user's on the path, or one of theirs in a
// sticky directory, is not this user's to trust.
func TestOwnPathOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a directory to another user")
	}
	for _, sticky := range []bool{false, true} {
		dir := t.TempDir()
		file := filepath.Join(dir, "bin", "x")
		mkdir(t, filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		if sticky {
			chmod(t, dir, os.ModeSticky|0o777)
		}
		if err := os.Chown(filepath.Dir(file), 12345, 12345); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		if ownPath(file, f) {
			t.Errorf("ownPath(%s) with bin/ another user's (in a sticky directory: %v) = true", file, sticky)
		}
		f.Close()
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, mode)
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
