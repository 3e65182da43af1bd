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
		Removed:  []db.Package{{Name: "a", Version: "1.0"}, {Name: "b"}},
		Unneeded: []db.Package{{Name: "c", Version: "2.0"}},
		Unshared: errors.New("record root"),
	}
	want := []string{"removed a 1.0", "removed b", "c 2.0 is no longer needed by another package (tip)"}
	if got := ChangeText(out, " (tip)"); !slices.Equal(got, want) {
		t.Errorf("ChangeText = %q, want %q", got, want)
	}
	if got := ChangeNotes(out); len(got) != 1 {
		t.Errorf("ChangeNotes = %q, want the Unshared note alone", got)
	}
	if got := CommittedText(out); got != "" {
		t.Errorf("CommittedText of no install = %q, want none", got)
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
		if how, why := CopyText(&tt.res, "/c", "/r"); how != tt.how || why != tt.why {
			t.Errorf("CopyText(%v) = %q, %q; want %q, %q", tt.res.Fallback, how, why, tt.how, tt.why)
		}
	}
}
