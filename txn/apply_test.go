package txn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/install"
	"pkg/repo"
)

// tellIn opens the root at dir, as a command does, and returns what Apply's Outcome would
// say of a change through a fetcher that committed, with PATH path, for a command that
// shows no notes if quiet.
func tellIn(t *testing.T, dir, path string, quiet bool) *Outcome {
	t.Helper()
	n := &install.Notices{Dir: dir}
	root, err := install.Open(context.Background(), dir, install.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	n.Hold(root)
	out := &Outcome{Committed: true}
	tg := Target{Root: root, Fetcher: &Fetcher{}, Notices: n, Path: path, Quiet: quiet}
	tg.tell(out)
	return out
}

// TestCopyNote: why an install copies is said once per root until that changes: not again
// by the next command while it holds, again once an install shared blocks in between; a
// quiet command's saying it does not count. Each command's told is the state the one
// before left for its commit to record.
func TestCopyNote(t *testing.T) {
	copied := &install.Result{Method: install.Copy, Fallback: errors.New("cross-device")}
	shared := &install.Result{Method: install.Clone}
	told := ""
	for i, tt := range []struct {
		quiet   bool
		results []*install.Result
		want    bool // said
	}{
		{true, []*install.Result{copied}, true},          // to a quiet command, which shows no notes
		{false, []*install.Result{copied, copied}, true}, // so again, once per change
		{false, []*install.Result{copied}, false},        // the root records it was said
		{false, []*install.Result{shared}, false},        // the condition ends
		{false, []*install.Result{copied}, true},         // and is new again
	} {
		got, state := copyNote(tt.results, "", told, tt.quiet)
		if (got != nil) != tt.want || got != nil && got != copied {
			t.Errorf("command %d: Copied %v, want said %v", i, got, tt.want)
		}
		told = state
	}
}

// TestTellPath: a root's bin/ off PATH is said once per root, not while it is on PATH, and
// again once it has left PATH; a quiet command's saying it does not count.
func TestTellPath(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	bin := filepath.Join(root, "bin")
	for i, tt := range []struct {
		quiet bool
		path  string
		want  string // said
	}{
		{true, "/usr/bin", bin},            // to a quiet command, which shows no notes
		{false, "/usr/bin", bin},           // so again
		{false, "/usr/bin", ""},            // the root records it was said
		{false, bin + ":/usr/bin", ""},     // on PATH: the condition ends
		{false, "/usr/bin:/usr/sbin", bin}, // and is new again
	} {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "tool"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
		if out := tellIn(t, root, tt.path, tt.quiet); out.OffPath != tt.want {
			t.Errorf("command %d, PATH %s: said %q, want %q", i, tt.path, out.OffPath, tt.want)
		}
	}
}

// TestApplyNoFetcher: a plan that installs packages, bound with no fetcher, is refused
// before it changes anything, and gives up its root all the same.
func TestApplyNoFetcher(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	root, err := install.Open(context.Background(), dir, install.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := (&Plan{Root: dir, install: []repo.Package{{Name: "a", Version: "1", SHA256: strings.Repeat("0", 64)}}, why: reasons(nil, nil, "")}).fill(nil)
	p.Bind(Target{Root: root})
	if _, err := p.Apply(context.Background()); !errors.Is(err, errNoFetcher) {
		t.Errorf("Apply with no fetcher: %v, want %v", err, errNoFetcher)
	}
	if _, err := p.Apply(context.Background()); !errors.Is(err, ErrNotBound) {
		t.Errorf("Apply again: %v, want %v", err, ErrNotBound)
	}
	if err := install.Exists(dir); !errors.Is(err, install.ErrNoRoot) {
		t.Errorf("the root made for the plan is still there: %v", err)
	}
}

// TestTellRecordedUncommitted: a change whose commit recorded its notes (foreseePath,
// foreseeCopy) and then failed, as a new root's seal whose sync fails does, the change
// kept in the root, says them all the same: the root records them as said, and would
// never say them again; where the commit recorded nothing, nothing is said, and the
// notes stay due.
func TestTellRecordedUncommitted(t *testing.T) {
	copied := &install.Result{Method: install.Copy, Fallback: errors.New("cross-device")}
	for _, recorded := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "root")
		bin := filepath.Join(dir, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "tool"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
		n := &install.Notices{Dir: dir}
		root, err := install.Open(context.Background(), dir, install.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n.Hold(root)
		state := copyState(copied, "")
		tg := Target{Root: root, Fetcher: &Fetcher{}, Notices: n, Path: "/usr/bin"}
		tg.foreseePath()
		tg.copied, tg.copySaid = copied, state // as foreseeCopy leaves one copy
		if recorded {
			// What the commit's transaction wrote before its error.
			n.Said("path", bin)
			n.Said("copy", state)
		}
		out := &Outcome{}
		tg.tell(out)
		root.Close()
		if got := out.OffPath != ""; got != recorded {
			t.Errorf("commit failed, notes recorded %v: said the PATH note %v", recorded, got)
		}
		if got := out.Copied != nil; got != recorded {
			t.Errorf("commit failed, notes recorded %v: said the copy note %v", recorded, got)
		}
	}
}
