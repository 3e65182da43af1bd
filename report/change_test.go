package report

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/txn"
)

func TestChangeText(t *testing.T) {
	out := &txn.Outcome{
		Removed:  []db.Record{{Name: "a", Version: "1.0"}, {Name: "b"}},
		Unneeded: []db.Record{{Name: "c", Version: "2.0"}},
		Stranded: []db.Record{{Name: "d", Version: "3.0"}},
		Unshared: errors.New("record root"),
	}
	want := []string{"removed a 1.0", "removed b", "c 2.0 is no longer needed by another package", "d 3.0 is needed only by packages no longer needed (tip)"}
	if got := changeText(out, " (tip)"); !slices.Equal(got, want) {
		t.Errorf("changeText = %q, want %q", got, want)
	}
	if got := changeNotes(out); len(got) != 1 {
		t.Errorf("changeNotes = %q, want the Unshared note alone", got)
	}
	if got := committedText(out); got != "" {
		t.Errorf("committedText of no install = %q, want none", got)
	}
}

func TestCopyText(t *testing.T) {
	tests := []struct {
		res      install.Result
		how, why string
	}{
		{install.Result{Method: install.Clone}, "", ""},
		{install.Result{Method: install.Copy, Fallback: fmt.Errorf("clone: %w", syscall.EXDEV)},
			"through a buffer", "the cache /c and the root /r are on different filesystems or mounts"},
		{install.Result{Fallback: fmt.Errorf("clone: %w", syscall.EOPNOTSUPP)},
			"with copy_file_range", "the filesystem of /r cannot share blocks between files (XFS and btrfs can)"},
		{install.Result{Fallback: errors.New("odd")}, "with copy_file_range", "odd"},
	}
	for _, tt := range tests {
		if how, why := copyText(&tt.res, "/c", "/r"); how != tt.how || why != tt.why {
			t.Errorf("copyText(%v) = %q, %q; want %q, %q", tt.res.Fallback, how, why, tt.how, tt.why)
		}
	}
}

// TestAppliedText: a change that did not commit says what it staged, but not what it
// removed nor what the cache could not do.
func TestAppliedText(t *testing.T) {
	out := &txn.Outcome{
		Results:  []*install.Result{{Name: "a", Version: "2", Previous: "1", Files: 1, Bytes: 10}},
		Removed:  []db.Record{{Name: "b", Version: "1"}},
		Unshared: errors.New("record root"),
		Root:     "/r",
	}
	for _, done := range []bool{true, false} {
		out.Committed = done
		told := AppliedText(out, "")
		want := Told{Out: []string{"upgraded a 1 to 2: 1 file, 10 B (0 B cloned, 0 B copied) in 0s", "committed 1 package in 0s"}}
		if done {
			want.Out = append(want.Out, "removed b 1")
			want.Notes = []string{"record root; a cache prune from another root may remove what this one installed from"}
		}
		if !slices.Equal(told.Out, want.Out) || !slices.Equal(told.Notes, want.Notes) || len(told.Warnings) != 0 {
			t.Errorf("done %v: AppliedText = %q, want %q", done, told, want)
		}
	}
}

// TestAppliedNotes: what the root has not been told comes as notes: how it copied, and a
// bin/ off PATH, with the line to paste.
func TestAppliedNotes(t *testing.T) {
	out := &txn.Outcome{Root: "/r", Cache: "/c", Committed: true, OffPath: "/r/bin",
		Copied: &install.Result{Method: install.Copy, Fallback: syscall.EOPNOTSUPP}}
	want := []string{
		"the filesystem of /r cannot share blocks between files (XFS and btrfs can): copying through a buffer instead of sharing blocks",
		`/r/bin is not on PATH; to run the commands pkg installs there, add it in your shell's profile: export PATH=/r/bin:"$PATH"`,
	}
	if got := AppliedText(out, "").Notes; !slices.Equal(got, want) {
		t.Errorf("AppliedText notes = %q, want %q", got, want)
	}
}

// TestAppliedNoteColon: a bin/ whose path holds ':', PATH's separator, gets no line to
// paste, which would put two other directories on PATH.
func TestAppliedNoteColon(t *testing.T) {
	out := &txn.Outcome{Root: "/r/co:lon", Cache: "/c", Committed: true, OffPath: "/r/co:lon/bin"}
	want := []string{"/r/co:lon/bin is not on PATH, and cannot be: it holds ':', which separates PATH's directories; " +
		"to run the commands pkg installs there, make a symlink to it at a path without ':' and put that on PATH"}
	if got := AppliedText(out, "").Notes; !slices.Equal(got, want) {
		t.Errorf("AppliedText notes = %q, want %q", got, want)
	}
}
