package install

import (
	"fmt"
	"slices"
	"testing"

	"pkg/db"
)

// TestDependentsWording: a removal refused as packages depend on what it removes names
// them all where they are few (one more than it would name of many: never "and 1 more");
// where they are many (libc6's are most of a system), it says how many and names a few,
// those asked for first, each list said to be cut short.
func TestDependentsWording(t *testing.T) {
	rec := func(name string) db.Record { return db.Record{Name: name, Version: "1"} }
	recs := func(n int) []db.Record {
		out := make([]db.Record, n)
		for i := range out {
			out[i] = rec(fmt.Sprintf("p%d", i+1))
		}
		return out
	}
	dependents := func(n int, asked ...string) *DependentsError {
		e := &DependentsError{Removed: rec("lib"), By: recs(n)}
		for _, r := range e.By {
			e.Versions = append(e.Versions, r.Name+" "+r.Version)
		}
		e.AskedFirst(func(key string) bool { return slices.Contains(asked, key) })
		return e
	}
	for _, tt := range []struct {
		err  error
		all  bool
		want string
	}{
		{dependents(2, "p2"), true, "remove lib: p2 1 and p1 1 depend on it (remove p2 p1 too, or first)"},
		{dependents(30), false, "remove lib: 30 packages depend on it: p1 1, p2 1, p3 1, p4 1, p5 1, and 25 more (remove them too, or first)"},
		{dependents(30, "p9", "p30"), false, "remove lib: 30 packages depend on it: p9 1, p30 1, asked for, and p1 1, p2 1, p3 1, and 25 more (remove them too, or first)"},
		{dependents(8, "p1", "p2", "p3", "p4", "p5", "p6"), false, "remove lib: 8 packages depend on it: p1 1, p2 1, p3 1, p4 1, p5 1, asked for, and 3 more (remove them too, or first)"},
		{&NeededError{Remove: []string{"lib"}, By: recs(2), Through: map[string][]db.Record{"p1": recs(7)}}, false,
			"remove lib: p1 1 (through p1 1, p2 1, p3 1, p4 1, p5 1 and 2 more) and p2 1, asked for, need it: remove p1 p2 too, or first"},
		{&NeededError{Remove: []string{"lib"}, By: recs(7)}, false,
			"remove lib: 7 packages asked for need it: p1 1, p2 1, p3 1, p4 1, p5 1 and 2 more: remove them too, or first"},
		{&NeededError{Remove: []string{"lib", "x"}, By: recs(1), Through: map[string][]db.Record{"p1": recs(1)}}, true,
			"remove lib x: p1 1 (through p1 1), asked for, needs them: remove p1 too, or first"},
		{&NeededError{Remove: []string{"lib"}, By: recs(6), Through: map[string][]db.Record{"p1": recs(2)}}, true,
			"remove lib: p1 1 (through p1 1 and p2 1), p2 1, p3 1, p4 1, p5 1 and p6 1, asked for, need it: remove p1 p2 p3 p4 p5 p6 too, or first"},
		{&NeededError{Remove: []string{"lib"}, By: recs(1), Through: map[string][]db.Record{"p1": recs(6)}}, true,
			"remove lib: p1 1 (through p1 1, p2 1, p3 1, p4 1, p5 1 and p6 1), asked for, needs it: remove p1 too, or first"},
		{dependents(6), true, "remove lib: p1 1, p2 1, p3 1, p4 1, p5 1 and p6 1 depend on it (remove p1 p2 p3 p4 p5 p6 too, or first)"},
		{&UnknownDependenciesError{Remove: []string{"lib"}, Bare: recs(2)}, false,
			"remove lib: the dependencies of p1 1 and p2 1 are unknown, so they may need what goes (a repair recorded them from their trees alone, and no index read offers their archives)"},
		{&UnknownDependenciesError{Remove: []string{"lib"}, Bare: recs(6)}, false,
			"remove lib: the dependencies of p1 1, p2 1, p3 1, p4 1, p5 1 and p6 1 are unknown, so they may need what goes (a repair recorded them from their trees alone, and no index read offers their archives)"},
	} {
		all := false
		switch e := tt.err.(type) {
		case *DependentsError:
			all = e.NamesAll()
		case *NeededError:
			all = e.NamesAll()
		}
		if got := tt.err.Error(); got != tt.want || all != tt.all {
			t.Errorf("got %q, names all %v\nwant %q, %v", got, all, tt.want, tt.all)
		}
	}
}
