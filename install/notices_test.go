package install

import (
	"context"
	"path/filepath"
	"testing"
)

func TestNotices(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	said := 0
	say := func() bool { said++; return true }
	tell := func(n *Notices, state string) {
		t.Helper()
		if state == "" {
			n.End("k")
		} else if n.Due("k", state) && say() {
			n.Said("k", state)
		}
	}

	n := &Notices{Dir: dir}
	tell(n, "a") // no root yet: said, not recorded
	tell(&Notices{Dir: dir}, "a")
	if said != 2 {
		t.Fatalf("without a root: said %d times, want 2", said)
	}

	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n.Hold(r) // records what n said before (with the root's first write, or at Close)
	held := &Notices{Dir: dir, DryRun: true}
	held.Hold(r)
	tell(held, "a")
	if said != 2 {
		t.Errorf("said again once recorded: %d", said)
	}
	dry := &Notices{Dir: dir, DryRun: true}
	dry.Hold(r)
	tell(dry, "b") // a new state: said, not recorded
	if state, _ := r.DB().SaidState("k"); state != "a" {
		t.Errorf("dry run recorded %q", state)
	}
	tell(n, "") // the condition ended: forgotten, said nothing
	if state, _ := r.DB().SaidState("k"); said != 3 || state != "" {
		t.Errorf("after the end: said %d times, state %q; want 3, \"\"", said, state)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	tell(&Notices{Dir: dir}, "a")
	if said != 4 {
		t.Errorf("said %d times after the end, want 4", said)
	}

	// Said in a root with a commit, by the command that holds it: recorded with its next
	// write, or at its Close, not in a transaction of its own; a command reading the root
	// meanwhile says it too, but none after.
	if r, err = Open(context.Background(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	late := &Notices{Dir: dir}
	late.Hold(r)
	tell(late, "c")
	tell(&Notices{Dir: dir}, "c")
	if said != 6 {
		t.Errorf("said %d times, want 6: by the command that holds the root, and by one reading it before its Close", said)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	tell(&Notices{Dir: dir}, "c")
	if said != 6 {
		t.Errorf("said %d times, want 6: recorded at the holder's Close", said)
	}
}
