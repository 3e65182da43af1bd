package progress

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"pkg/repo"
	"pkg/txn"
)

// TestThroughput: a small or quick download gives no rate.
func TestThroughput(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		d    time.Duration
		want string
	}{
		{174, time.Second, ""},
		{64 << 20, 10 * time.Millisecond, ""},
		{64 << 20, 2 * time.Second, " (32.0 MiB/s)"},
	} {
		if got := throughput(tt.n, tt.d); got != tt.want {
			t.Errorf("throughput(%d, %v) = %q, want %q", tt.n, tt.d, got, tt.want)
		}
	}
}

// TestReporter checks what a Reporter says, off a terminal, for each kind of fetch, and
// that Quiet silences it and Verbose adds the cached packages.
func TestReporter(t *testing.T) {
	p := repo.Package{Name: "hello", Version: "1.2.0", Size: 2 << 20, SHA256: "ab"}
	events := []txn.Fetched{
		{Package: p, How: txn.Cached},
		{Package: p, How: txn.ByOther},
		{Package: p, Elapsed: time.Second},
		{Package: p, Err: errors.New("broken")},
	}
	for _, tt := range []struct {
		name string
		o    Options
		out  string
	}{
		{"plain", Options{}, "hello 1.2.0 is in the cache: another pkg fetched it\nfetched hello 1.2.0: 2.0 MiB in 1s (2.0 MiB/s)\n"},
		{"verbose", Options{Verbose: true}, "hello 1.2.0 is already in the cache\nhello 1.2.0 is in the cache: another pkg fetched it\nfetched hello 1.2.0: 2.0 MiB in 1s (2.0 MiB/s)\n"},
		{"quiet", Options{Quiet: true}, ""},
	} {
		var out, notes bytes.Buffer
		tt.o.NotePrefix = "note: "
		r := New(&out, &notes, tt.o)
		err := r.During([]repo.Package{p}, func() error {
			if w := r.Fetching(p); w != nil {
				t.Errorf("%s: Fetching off a terminal returned a bar", tt.name)
			}
			for _, ev := range events {
				r.Fetched(ev)
			}
			r.Retrying(errors.New("read index: reset"), time.Second, 2, 3)
			return nil
		})
		if err != nil || out.String() != tt.out {
			t.Errorf("%s: out %q, %v; want %q", tt.name, out.String(), err, tt.out)
		}
		wantNote := "note: read index: reset; trying again in 1s (attempt 2 of 3)\n"
		if tt.o.Quiet {
			wantNote = ""
		}
		if notes.String() != wantNote {
			t.Errorf("%s: notes %q, want %q", tt.name, notes.String(), wantNote)
		}
	}
}

// TestObserver checks the lines an Observer prints for a session: notes, warnings and
// waits for the root, all silenced by Quiet, and Verbose's cached packages.
func TestObserver(t *testing.T) {
	p := repo.Package{Name: "hello", Version: "1.2.0"}
	for _, quiet := range []bool{false, true} {
		var out, notes bytes.Buffer
		o := NewObserver(&out, &notes, "pkg", "/r", Options{Quiet: quiet})
		o.Note("offline")
		o.Warn("unsigned")
		o.RootWaiting("pid 7")
		o.Fetched(txn.Fetched{Package: p, How: txn.Cached})
		o.Verbose()
		o.Fetched(txn.Fetched{Package: p, How: txn.Cached})
		wantNotes := "pkg: note: offline\npkg: warning: unsigned\npkg: note: waiting for pid 7 to finish with /r\n"
		wantOut := "hello 1.2.0 is already in the cache\n"
		if quiet {
			wantNotes, wantOut = "", ""
		}
		if notes.String() != wantNotes || out.String() != wantOut {
			t.Errorf("quiet %v: notes %q, out %q; want %q, %q", quiet, notes.String(), out.String(), wantNotes, wantOut)
		}
	}
}
