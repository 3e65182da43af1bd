package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/install"
	"pkg/session"
)

// TestInfo shows an installed package, one the repository offers, and, with no
// repository, refuses one not installed.
func TestInfo(t *testing.T) {
	s, o := installed(t, "hello")
	for _, tt := range []struct {
		name    string
		offered bool
	}{{"hello", false}, {"tool", true}} {
		info, err := s.Info(context.Background(), tt.name)
		offered := info.Offered != nil
		name := ""
		if offered {
			name = info.Offered.Name
		} else if info.Installed != nil {
			name = info.Installed.Name
		}
		if err != nil || name != tt.name || (info.Installed != nil) == offered || offered != tt.offered {
			t.Errorf("Info(%s) = %+v, offered %v, %v", tt.name, info, offered, err)
		}
	}
	var nf *session.NotOfferedError
	if _, err := s.Info(context.Background(), "nope"); !errors.As(err, &nf) {
		t.Errorf("Info(nope): %v, want a *session.NotOfferedError", err)
	}
	o.Repos = nil
	s, _ = newSession(t, o, "")
	var ne *session.NotInstalledError
	if _, err := s.Info(context.Background(), "tool"); !errors.As(err, &ne) {
		t.Errorf("Info(tool) with no repository: %v, want a *session.NotInstalledError", err)
	}
	o.Root = filepath.Join(t.TempDir(), "none")
	s, _ = newSession(t, o, "")
	if _, err := s.Info(context.Background(), "tool"); !errors.Is(err, install.ErrNoRoot) {
		t.Errorf("Info(tool) of no root, with no repository: %v, want install.ErrNoRoot", err)
	}
}

// TestVerify installs a package, then verifies it: a name not installed is a
// *session.NotInstalledError, an intact root has no problems, and a changed file is one.
func TestVerify(t *testing.T) {
	s, o := installed(t, "hello")
	var ne *session.NotInstalledError
	if _, _, err := s.Verify(context.Background(), []string{"nope"}, false); !errors.As(err, &ne) {
		t.Errorf("Verify(nope): %v, want a *session.NotInstalledError", err)
	}
	for _, full := range []bool{false, true} {
		all, problems, err := s.Verify(context.Background(), nil, full)
		if err != nil || len(all) != 1 || len(problems) != 0 {
			t.Errorf("Verify (full %v) of an intact root: %v, %v, %v", full, all, problems, err)
		}
	}
	if err := os.WriteFile(filepath.Join(o.Root, "pkgs", "hello", "bin", "hello"), []byte("changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, problems, err := s.Verify(context.Background(), []string{"hello"}, true); err != nil || len(problems) != 1 {
		t.Errorf("Verify of a changed file: %v, %v; want one problem", problems, err)
	}
}

// TestVerifyRecordsChecks: verify records the spot check of the cache entry it compared
// the files with, as a command that changes the root does when it commits, so that the
// next verify reads none of the entry's tar to trust its index.
func TestVerifyRecordsChecks(t *testing.T) {
	if _, err := os.Stat("/proc/sys/kernel/random/boot_id"); err != nil {
		t.Skip("no boot id: no check log")
	}
	s, o := installed(t, "hello")
	time.Sleep(1100 * time.Millisecond) // older than the check log's settling time
	if _, problems, err := s.Verify(context.Background(), nil, false); err != nil || len(problems) != 0 {
		t.Fatalf("Verify of an intact root: %v, %v", problems, err)
	}
	s.Close()
	logs, _ := filepath.Glob(filepath.Join(o.Cache, "checked.*"))
	var lines []string
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Fields(string(b))...)
	}
	if len(lines) != 3 {
		t.Errorf("check log after verify: %q, want the one entry's line", lines)
	}
}
