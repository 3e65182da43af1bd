package report

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"pkg/fetch"
	"pkg/internal/regfile"
	"pkg/notice"
)

func TestTrimmedText(t *testing.T) {
	two := fetch.Trimmed{Removed: make([]fetch.Entry, 2), Freed: 2048, Size: 4096}
	tests := []struct {
		pruned     bool
		l          fetch.Limits
		unfinished int64
		want       string
	}{
		{false, fetch.Limits{}, 0, "removed 2 cached packages, 2.0 KiB of archives (blocks installed packages share with them stay in use)"},
		{false, fetch.Limits{}, 1024, "removed 2 cached packages, 2.0 KiB of archives (blocks installed packages share with them stay in use), and 1.0 KiB that killed downloads left"},
		{true, fetch.Limits{}, 0, "removed 2 cached packages no installed package uses, 2.0 KiB"},
		{true, fetch.Limits{OlderThan: 30 * 24 * time.Hour, MaxSize: 1}, 0,
			"removed 2 cached packages no installed package uses and unused for 30 days, the least recently used first, 2.0 KiB"},
	}
	for _, tt := range tests {
		if got := TrimmedText(two, tt.pruned, tt.l, tt.unfinished); got != tt.want {
			t.Errorf("TrimmedText(%v, %+v, %d) = %q, want %q", tt.pruned, tt.l, tt.unfinished, got, tt.want)
		}
	}
	if got := OverLimitText(two, fetch.Limits{MaxSize: 4096}); got != "" {
		t.Errorf("OverLimitText at the limit = %q, want none", got)
	}
	if got := OverLimitText(two, fetch.Limits{MaxSize: 1}); !strings.Contains(got, "over its limit of 1 B") {
		t.Errorf("OverLimitText over the limit = %q", got)
	}
	want := "pruned the cache to its configured limits: removed 2 cached packages no installed package uses, 2.0 KiB; it takes 4.0 KiB"
	if got := NoticeText(notice.AutoPruned{Removed: len(two.Removed), Freed: two.Freed, Size: two.Size}); got != want {
		t.Errorf("NoticeText(AutoPruned) = %q, want %q", got, want)
	}
}

func TestWriteCache(t *testing.T) {
	bad := errors.New("damaged")
	es := []fetch.Entry{
		{SHA256: strings.Repeat("a", 64), Name: "hello", Version: "1.0", Size: 10240},
		{SHA256: strings.Repeat("b", 64), Err: bad},
	}
	var b strings.Builder
	unknown, err := WriteCache(&b, es)
	if err != nil || len(unknown) != 1 || unknown[0] != bad {
		t.Fatalf("WriteCache: %v, %v; want the damaged entry's error", unknown, err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "aaaaaaaaaaaaaaaa  hello 1.0        10.0 KiB") || !strings.Contains(lines[1], "unknown package") {
		t.Errorf("WriteCache printed:\n%s", b.String())
	}
}

// TestUnknownText checks that an entry pkg cache list cannot name is reported damaged only
// where fetch.Damaged says so: not for a permission error, nor for an error that says
// nothing of the entry (out of descriptors); and that the text names the first error.
func TestUnknownText(t *testing.T) {
	path := "/c/tars/x.tar"
	for _, tt := range []struct {
		err     error
		damaged bool
	}{
		{&fs.PathError{Op: "open", Path: path, Err: &regfile.NotRegularError{Type: fs.ModeDir}}, true},
		{&fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}, false},
		{&fs.PathError{Op: "open", Path: path, Err: syscall.EMFILE}, false},
	} {
		text, damaged := UnknownText([]error{tt.err, tt.err})
		if want := "cannot read which package each of 2 cached archives is (" + tt.err.Error() + ")"; text != want {
			t.Errorf("%v: %q, want %q", tt.err, text, want)
		}
		if damaged != tt.damaged {
			t.Errorf("%v: damaged %v, want %v", tt.err, damaged, tt.damaged)
		}
	}
}
