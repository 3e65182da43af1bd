package install

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// describe words a finding of Verify by the sentinels its Err matches, as pkg verify does:
// "tool 1: modified share/x (mode, size)".
func describe(p FileError) string {
	var kind string
	for _, k := range []struct {
		err  error
		word string
	}{{ErrModified, "modified"}, {ErrMissing, "missing"}, {ErrExtra, "extra"}, {ErrUnreadable, "unreadable"}} {
		if errors.Is(p.Err, k.err) {
			kind = k.word
		}
	}
	var more []string
	for _, m := range []struct {
		err  error
		word string
	}{{ErrType, "type"}, {ErrLinkTarget, "symlink target"}, {ErrMode, "mode"}, {ErrSize, "size"}, {ErrContent, "content"},
		{ErrCommandLink, "command link"}, {ErrForeign, "foreign"}, {ErrPackageDir, "package directory"}, {fs.ErrPermission, "permission denied"}} {
		if errors.Is(p.Err, m.err) {
			more = append(more, m.word)
		}
	}
	s := p.Package + " " + p.Version + ": " + kind + " " + p.Path
	if len(more) > 0 {
		s += " (" + strings.Join(more, ", ") + ")"
	}
	return s
}

// TestFileErrorMatches checks that a finding matches its kind and what it says more, and
// nothing else, also when wrapped.
func TestFileErrorMatches(t *testing.T) {
	var err error = FileError{Package: "tool", Version: "1", Path: "bin/tool", Err: found(ErrModified, ErrMode, ErrContent)}
	err = fmt.Errorf("check: %w", err)
	var fe FileError
	if !errors.As(err, &fe) || fe.Path != "bin/tool" {
		t.Fatalf("errors.As(%v) = %+v, want the FileError", err, fe)
	}
	for _, target := range []error{ErrModified, ErrMode, ErrContent} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
	for _, target := range []error{ErrMissing, ErrExtra, ErrUnreadable, ErrType, ErrSize, ErrLinkTarget, ErrCommandLink, ErrForeign} {
		if errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = true", err, target)
		}
	}
}
