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
	if got, want := removedText(out), []string{"removed a 1.0", "removed b"}; !slices.Equal(got, want) {
		t.Errorf("removedText = %q, want %q", got, want)
	}
	want := []string{"c 2.0 is no longer needed by another package", "d 3.0 is needed only by packages no longer needed (tip)"}
	if got := changeText(out, " (tip)"); !slices.Equal(got, want) {
		t.Errorf("changeText = %q, want %q", got, want)
	}
	if got := changeNotes(out); len(got) != 1 {
		t.Errorf("changeNotes = %q, want the Unshared note alone", got)
	}
	out.Committed = true
	if got := committedText(out); got != "" {
		t.Errorf("committedText of removals alone = %q, want none", got)
	}
}

// TestCommittedText: the commit's line counts each package the change installed,
// upgraded, downgraded, replaced, reinstalled or removed, once, in that order.
func TestCommittedText(t *testing.T) {
	installed := &install.Result{Name: "a", Version: "1"}
	upgraded := &install.Result{Name: "b", Version: "2", Previous: "1"}
	downgraded := &install.Result{Name: "c", Version: "1", Previous: "2"}
	replaced := &install.Result{Name: "d", Version: "1", Previous: "1"}
	gone := []db.Record{{Name: "e", Version: "1"}}
	for _, tt := range []struct {
		results []*install.Result
		removed []db.Record
		want    string
	}{
		{[]*install.Result{installed}, nil, "committed 1 package in 0s"},
		{[]*install.Result{installed, upgraded}, gone, "committed 3 packages (1 installed, 1 upgraded, 1 removed) in 0s"},
		{[]*install.Result{replaced, downgraded, upgraded}, nil, "committed 3 packages (1 upgraded, 1 downgraded, 1 replaced) in 0s"},
		{[]*install.Result{upgraded}, gone, "committed 2 packages (1 upgraded, 1 removed) in 0s"},
	} {
		out := &txn.Outcome{Results: tt.results, Removed: tt.removed, Committed: true}
		if got := committedText(out); got != tt.want {
			t.Errorf("committedText = %q, want %q", got, tt.want)
		}
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
		want := Told{Out: []string{"upgraded a 1 to 2: 1 file, 10 B (0 B cloned, 0 B copied) in 0s", "committed 1 package (1 upgraded) in 0s"}}
		if done {
			want.Out = []string{want.Out[0], "removed b 1", "committed 2 packages (1 upgraded, 1 removed) in 0s"}
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
