package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// TestUnverifiedSaidOnce checks that a root hears of an unverified repository once (a
// warning), and again only when that changes: from signed by a key not trusted to
// unsigned. A command that changes the root records what it said; one that only reads it
// (search) writes nothing, so it says it until one does; --quiet says nothing, and so
// records nothing.
func TestUnverifiedSaidOnce(t *testing.T) {
	r := newSignedRepo(t)
	e := newEnv(t, t.TempDir(), r.url)
	signedBy := "pkg: warning: repository " + r.url + "/ is signed by key "
	unsigned := "pkg: warning: repository " + r.url + "/ is not signed; "
	for i, tt := range []struct {
		args []string
		want string // "" for no warning
	}{
		{[]string{"search"}, signedBy}, // no root yet
		{[]string{"search"}, signedBy},
		{[]string{"--quiet", "install", "hello"}, ""},
		{[]string{"install", "fortunes"}, signedBy},
		{[]string{"search"}, ""},
		{[]string{"unsign"}, ""},
		{[]string{"--quiet", "search"}, ""},
		{[]string{"search"}, unsigned}, // a command that only reads the root records nothing
		{[]string{"search"}, unsigned},
		{[]string{"--quiet", "upgrade"}, ""},
		{[]string{"upgrade"}, unsigned},
		{[]string{"search"}, ""},
		{[]string{"upgrade"}, ""},
	} {
		if tt.args[0] == "unsign" {
			index, _ := r.files()
			r.put(index, nil)
			continue
		}
		_, stderr := e.ok(tt.args...)
		if tt.want == "" && strings.Contains(stderr, "pkg: warning:") || tt.want != "" && (strings.Count(stderr, "pkg: warning:") != 1 || !strings.Contains(stderr, tt.want)) {
			t.Errorf("%d: pkg %s: stderr %q, want warning %q", i, strings.Join(tt.args, " "), stderr, tt.want)
		}
	}
}

// TestUnsignedLocalNote checks that an unsigned local directory is a note, which --quiet
// hides and which is then not counted as said.
func TestUnsignedLocalNote(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	note := "pkg: note: repository file://"
	for i, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"--quiet", "install", "hello"}, false},
		{[]string{"install", "fortunes"}, true},
		{[]string{"search"}, false},
		{[]string{"remove", "fortunes"}, false},
	} {
		_, stderr := e.ok(tt.args...)
		if strings.Contains(stderr, "pkg: warning:") || strings.Contains(stderr, note) != tt.want {
			t.Errorf("%d: pkg %s: stderr %q, want the note: %v", i, strings.Join(tt.args, " "), stderr, tt.want)
		}
	}
}

// TestCopyNoteOnce checks that a root that cannot share blocks with the cache is told so
// once, and again when the reason changes (another cache, on another filesystem).
func TestCopyNoteOnce(t *testing.T) {
	mnt := testfs.Tmpfs(t, 64<<20) // tmpfs cannot share blocks
	e := newEnv(t, mnt, demoRepo)
	other := filepath.Join(t.TempDir(), "cache") // on another filesystem than the root
	for i, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "hello"}, "cannot share blocks between files"},
		{[]string{"install", "fortunes"}, ""},
		{[]string{"--cache", other, "install", "--reinstall", "fortunes"}, "are on different filesystems or mounts"},
		{[]string{"--cache", other, "install", "--reinstall", "fortunes"}, ""},
	} {
		_, stderr := e.ok(tt.args...)
		if got := strings.Count(stderr, "instead of sharing blocks"); tt.want == "" && got != 0 || tt.want != "" && (got != 1 || !strings.Contains(stderr, tt.want)) {
			t.Errorf("%d: pkg %s: stderr %q, want note %q", i, strings.Join(tt.args, " "), stderr, tt.want)
		}
	}
}

// TestTimesMeanWhatTheySay checks that a small download gives no rate, and that each
// package's time leaves out the commit, which is said once (the rates: progress's
// TestThroughput).
func TestTimesMeanWhatTheySay(t *testing.T) {
	e := newEnv(t, t.TempDir(), serve(t, demoRepo))
	out, _ := e.ok("install", "hello", "fortunes")
	if strings.Contains(out, "/s)") || strings.Count(out, "committed 3 packages in ") != 1 || !strings.Contains(out, "fetched hello 1.2.0: ") {
		t.Errorf("install output:\n%s", out)
	}
}

// TestReplacedWording checks that putting back a version's other archive is worded by
// which archive it put back: the repository's on upgrade, the lockfile's on sync.
func TestReplacedWording(t *testing.T) {
	e, dir := repoOf(t, "lib", "1.0", 'v')
	base := filepath.Dir(dir)
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "lib")
	e.ok("sync", "-f", lock)
	fixed := filepath.Join(base, "lib-1.0-fixed.tar")
	if err := os.WriteFile(fixed, packageTar(t, "lib", "1.0", 'w'), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", dir, fixed, "--name", "lib", "--version", "1.0", "--replace")
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "replaced lib 1.0 with the entry the repository now has of it") {
		t.Errorf("upgrade to the republished archive: %q", out)
	}
	if out, _ := e.ok("sync", "-f", lock); !strings.Contains(out, "replaced lib 1.0 with the archive the lockfile names") {
		t.Errorf("sync back to the lockfile's archive: %q", out)
	}
}
