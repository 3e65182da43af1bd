package install

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/testfs"
	"pkg/notice"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// damage empties the database of the root at dir: damage that every command refuses and
// a repair replaces.
func damage(t *testing.T, dir string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, ".pkg", "db"), nil, 0o644))
}

// TestRebuildRemovesMarkers: the done markers beside the database a repair replaces name
// stamps of that database alone (db.done-ID): the repair removes them, as the new database,
// marked with this pkg's format, never sweeps the markers beside it.
func TestRebuildRemovesMarkers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r := openRoot(t, dir)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, dir)
	marker := filepath.Join(dir, ".pkg", "db.done-0000000000004005")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced database's marker after the repair: %v; want it removed", err)
	}
}

// TestRebuildUnmatched: a tree in pkgs/ that no candidate matches stops the repair before
// it changes anything, as an *UnmatchedError naming the tree: the database stays, and the
// tree with it.
func TestRebuildUnmatched(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r := openRoot(t, dir)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	stranger := filepath.Join(dir, "pkgs", "stranger")
	if err := os.MkdirAll(filepath.Join(stranger, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	damage(t, dir)
	before, err := os.ReadFile(filepath.Join(dir, ".pkg", "db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return nil, nil })
	if ue := (*UnmatchedError)(nil); !errors.As(err, &ue) || !slices.Equal(ue.Trees, []string{stranger}) {
		t.Fatalf("Rebuild with an unknown tree: %v; want an *UnmatchedError naming %s", err, stranger)
	}
	if after, err := os.ReadFile(filepath.Join(dir, ".pkg", "db")); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the database after the refused repair: %v, changed %v", err, !bytes.Equal(after, before))
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, ".pkg", "db.damaged-*")); len(kept) != 0 {
		t.Errorf("the refused repair kept %v", kept)
	}
	if _, err := os.Stat(filepath.Join(stranger, "bin")); err != nil {
		t.Errorf("the unknown tree: %v", err)
	}
}

// installTimes returns the install time of each package of the root at dir, by key.
func installTimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	r := openRoot(t, dir)
	defer r.Close()
	recs, err := r.db.List()
	if err != nil {
		t.Fatal(err)
	}
	times := make(map[string]time.Time)
	for _, p := range recs {
		times[p.Key()] = p.Installed
	}
	return times
}

// TestRebuildSound: a repair of a database that is not damaged keeps it, records and all
// (no .pkg/db.damaged-N), says so, and still records the owners of the prefix's paths
// again and links what the prefix lacks; a package keeps its install time but where the
// repair links one of its files again (a link changes the file's ctime).
func TestRebuildSound(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	cands := map[string][]Candidate{}
	for _, p := range []repo.Package{prefixPkg("a", "1"), prefixPkg("b", "1")} {
		cands[p.Name] = []Candidate{{Package: p, Members: installIn(t, r, base, p, tree("etc/"+p.Name+"=x"))}}
	}
	must(t, r.remember("a note", "said"))
	r.Close()
	before := installTimes(t, dir)
	must(t, os.Remove(filepath.Join(dir, "etc/b")))
	out, err := Rebuild(context.Background(), dir, Options{}, func(name string) ([]Candidate, error) { return cands[name], nil })
	if err != nil {
		t.Fatal(err)
	}
	if !out.Sound || out.Kept != "" || !slices.Equal(out.Recorded, []string{"a 1", "b 1"}) {
		t.Errorf("Rebuild of a sound database: %+v; want it sound, kept in place, a and b recorded", out)
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, ".pkg", "db.damaged-*")); len(kept) != 0 {
		t.Errorf("the repair of a sound database kept %v", kept)
	}
	after := installTimes(t, dir)
	var st unix.Stat_t
	must(t, unix.Lstat(filepath.Join(dir, "etc/b"), &st))
	if !after["a"].Equal(before["a"]) || time.Unix(st.Ctim.Unix()).After(after["b"]) {
		t.Errorf("install times after the repair: %v; were %v: want a's kept and b's not before etc/b, linked again", after, before)
	}
	r = openRoot(t, dir)
	defer r.Close()
	if state, err := r.db.SaidState("a note"); err != nil || state != "said" {
		t.Errorf("what was said, after the repair: %q, %v; want it kept with the database", state, err)
	}
	checkPrefix(t, r)
}

// TestRebuildKeepsInstallTimes: a repair of a database older than its last commit (a copy
// put back) takes each package's install time from the record it can read, and gives a
// package it has no record of the time the repair linked its files: never a time before
// its files' last change, which verify and salvage compare ctimes with.
func TestRebuildKeepsInstallTimes(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	cands := map[string][]Candidate{}
	install := func(p repo.Package) {
		cands[p.Name] = []Candidate{{Package: p, Members: installIn(t, r, base, p, tree("etc/"+p.Name+"=x"))}}
	}
	install(prefixPkg("a", "1"))
	must(t, r.db.PutRepo(db.Pin{Location: "https://example.com/repo/"})) // a write, which records the time a's links ended
	old, err := os.ReadFile(filepath.Join(dir, ".pkg", "db"))
	if err != nil {
		t.Fatal(err)
	}
	install(prefixPkg("b", "1"))
	r.Close()
	before := installTimes(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, ".pkg", "db"), old, 0o644))
	out, err := Rebuild(context.Background(), dir, Options{}, func(name string) ([]Candidate, error) { return cands[name], nil })
	if err != nil {
		t.Fatal(err)
	}
	if out.Sound || out.Kept == "" {
		t.Errorf("Rebuild of a stale database: %+v; want it replaced and kept aside", out)
	}
	after := installTimes(t, dir)
	if !after["a"].Equal(before["a"]) || after["b"].Before(before["b"]) {
		t.Errorf("install times after the repair: %v; were %v: want a's kept and b's the repair's", after, before)
	}
	r = openRoot(t, dir)
	defer r.Close()
	checkPrefix(t, r)
}

// TestRebuildSoundLinksFail: the repair of a sound database whose last change's links
// into the prefix cannot be made (usr immutable) keeps it and returns no result, only
// the *LinksError; one where only bin/ cannot be synced (bin immutable) repairs the
// database all the same and then says bin/ is not as recorded.
func TestRebuildSoundLinksFail(t *testing.T) {
	base, dir, r := linksOwed(t)
	r.Close()
	none := func(string) ([]Candidate, error) { return nil, nil }
	mutable := immutable(t, filepath.Join(dir, "usr"))
	out, err := Rebuild(context.Background(), dir, Options{}, none)
	if le := new(LinksError); out != nil || !errors.As(err, &le) || !le.Prefix {
		t.Errorf("Rebuild with the roll-forward failing = %+v, %v; want no result and its *LinksError (Prefix)", out, err)
	}
	mutable()

	r = openRoot(t, dir)
	if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	bin := filepath.Join(dir, "bin")
	must(t, os.Remove(filepath.Join(bin, "tool")))
	must(t, os.MkdirAll(filepath.Join(dir, ".pkg", "staging", "cut"), 0o755)) // a command cut short: bin/ synced in full
	immutable(t, bin)
	out, err = Rebuild(context.Background(), dir, Options{}, none)
	if le := new(LinksError); out == nil || !out.Sound || len(out.Recorded) != 3 || !errors.As(err, &le) || le.Prefix {
		t.Errorf("Rebuild with bin/ immutable = %+v, %v; want the database repaired and bin/'s *LinksError", out, err)
	}
}

// TestRebuildSameShape: of two versions whose trees differ in content alone, a repair
// records the tree as the one whose files it holds, though the other comes first among
// the candidates.
func TestRebuildSameShape(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	one, two := prefixPkg("a", "1"), prefixPkg("a", "2")
	older := digestsOf(t, alignedTar(t, base, tree("etc/a=x")))
	cands := []Candidate{{Package: one, Members: older}, {Package: two, Members: installIn(t, r, base, two, tree("etc/a=y"))}}
	r.Close()
	damage(t, dir)
	out, err := Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return cands, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Recorded, []string{"a 2"}) {
		t.Errorf("recorded %q; want a 2, whose content the tree holds", out.Recorded)
	}
}

// TestRebuildGone: a package whose tree was deleted by hand (b, which a depends on) stops
// the repair of a sound database before it changes anything, as a *GoneError naming b and
// a, rather than record a roll-forward of links from a tree that is not there, which left
// the root refusing every change; verify then names b's tree, and no dependency of a. The
// repair of a database older than its last commit does not record b again and says so
// (Rebuilt.Gone, naming a, and the request b was asked for by, which goes with it), and
// verify then names a's dependency on b, which nothing meets.
func TestRebuildGone(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	cands := map[string][]Candidate{}
	a, b := prefixPkg("a", "1"), prefixPkg("b", "1")
	a.Depends = testrepo.Requires("b>=1")
	for _, p := range []repo.Package{b, a} {
		cands[p.Name] = []Candidate{{Package: p, Members: installIn(t, r, base, p, tree("etc/"+p.Name+"=x"))}}
	}
	must(t, r.DB().Request(map[string]repo.Requirement{"b": {Name: "b", Constraints: []repo.Constraint{{Op: ">=", Version: "1"}}}}))
	old, err := os.ReadFile(filepath.Join(dir, ".pkg", "db"))
	must(t, err)
	must(t, r.remember("a note", "said")) // a commit the old copy lacks
	r.Close()
	bTree := filepath.Join(dir, "pkgs", "b")
	must(t, os.RemoveAll(bTree))
	sound, err := os.ReadFile(filepath.Join(dir, ".pkg", "db"))
	must(t, err)
	candidates := func(name string) ([]Candidate, error) { return cands[name], nil }

	out, err := Rebuild(context.Background(), dir, Options{}, candidates)
	want := []Gone{{Package: "b", Version: "1", Tree: bTree, By: []string{"a 1"}}}
	if ge := (*GoneError)(nil); out != nil || !errors.As(err, &ge) || !reflect.DeepEqual(ge.Gone, want) {
		t.Fatalf("Rebuild of a sound database with b's tree gone = %+v, %v; want a *GoneError of %+v", out, err, want)
	}
	if after, err := os.ReadFile(filepath.Join(dir, ".pkg", "db")); err != nil || !bytes.Equal(after, sound) {
		t.Errorf("the database after the refused repair: %v, changed %v", err, !bytes.Equal(after, sound))
	}
	r = openRoot(t, dir)
	problems, err := r.Verify()
	r.Close()
	if err != nil || len(problems) != 1 || problems[0].Package != "b" || !errors.Is(problems[0].Err, ErrPackageDir) {
		t.Errorf("Verify after the refused repair: %v, %v; want b's package directory missing alone", problems, err)
	}

	must(t, os.WriteFile(filepath.Join(dir, ".pkg", "db"), old, 0o644))
	out, err = Rebuild(context.Background(), dir, Options{}, candidates)
	want[0].Requested = &repo.Requirement{Name: "b", Constraints: []repo.Constraint{{Op: ">=", Version: "1"}}}
	if err != nil || out.Sound || !slices.Equal(out.Recorded, []string{"a 1"}) || !reflect.DeepEqual(out.Gone, want) {
		t.Fatalf("Rebuild of a stale database with b's tree gone = %+v, %v; want a recorded again and b gone, needed by a", out, err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	problems, err = r.Verify()
	if err != nil || len(problems) != 1 || problems[0].Package != "a" || problems[0].Path != "" || problems[0].Requirement != "b>=1" || !errors.Is(problems[0].Err, ErrMissing) || !errors.Is(problems[0].Err, ErrDependency) {
		t.Errorf("Verify after the repair: %v, %v; want a's dependency b>=1 missing alone", problems, err)
	}
}

// TestRebuildFirstChangeCutShort repairs roots whose first install was cut short, before
// its database held a commit: while it staged (the empty database it created still
// db.new, its tree in staging) and after its tree moved into pkgs/ (its intents kept as
// names). Neither has a database to repair: Rebuild undoes the change as Open does,
// records nothing (not the tree the change moved), says what it undid, and leaves the
// empty database Open makes, db.new gone. A tree in pkgs/ beside an empty db.new and no
// intents is a lost database's all the same, and recorded again.
func TestRebuildFirstChangeCutShort(t *testing.T) {
	cuts := []struct {
		name   string
		fs     string
		cut    func(t *testing.T, r *Root, base string)
		record bool // the tree in pkgs/ is an installed package's, for Rebuild to record
	}{
		{"staging", "", func(t *testing.T, r *Root, base string) {
			stageTool(t, r, base, version1())
			r.Close() // which adopts the database: the crash did not
			must(t, os.Rename(filepath.Join(r.dir, ".pkg", "db"), filepath.Join(r.dir, ".pkg", "db.new")))
		}, false},
		{"intents", "xfs", func(t *testing.T, r *Root, base string) {
			staging, ino := stageTool(t, r, base, version1())
			must(t, r.db.SetIntents([]db.Intent{{Op: "install", Name: "tool", Staging: relOf(staging), Inode: ino}}))
			must(t, r.swapIn(staging, place{pkgs, "tool"}))
			r.Close()
			for _, name := range []string{"db", "db.sum", "db.new"} { // the crash took the database's link
				if err := os.Remove(filepath.Join(r.dir, ".pkg", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					t.Fatal(err)
				}
			}
		}, false},
		{"lost beside db.new", "", func(t *testing.T, r *Root, base string) {
			staging, _ := stageTool(t, r, base, version1())
			must(t, r.swapIn(staging, place{pkgs, "tool"}))
			r.Close()
			meta := filepath.Join(r.dir, ".pkg")
			if err := os.Remove(filepath.Join(meta, "db.sum")); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			must(t, os.Rename(filepath.Join(meta, "db"), filepath.Join(meta, "db.new"))) // empty: Open's, never adopted
		}, true},
	}
	for _, c := range cuts {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			if c.fs != "" {
				base = testfs.Mount(t, c.fs)
			}
			dir := filepath.Join(base, "root")
			c.cut(t, openRoot(t, dir), base)
			_, members, _ := scannedTar(t, base, version1())
			cands := []Candidate{{Package: pkgOf("tool", "1"), Members: members}}
			out, err := Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) { return cands, nil })
			if err != nil {
				t.Fatal(err)
			}
			if c.record {
				if out.Unrecorded || !slices.Equal(out.Recorded, []string{"tool 1"}) {
					t.Errorf("Rebuild: %+v; want tool recorded again", out)
				}
				return
			}
			if !out.Unrecorded || len(out.Recorded) != 0 || out.Kept != "" || len(out.Recovered) == 0 {
				t.Errorf("Rebuild: %+v; want nothing recorded, and what it undid", out)
			} else if _, ok := out.Recovered[0].(notice.RootRecovered); !ok {
				t.Errorf("Rebuild.Recovered: %#v; want a notice.RootRecovered first", out.Recovered)
			}
			if _, err := os.Lstat(filepath.Join(dir, "pkgs", "tool")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("pkgs/tool after Rebuild: %v; want it undone", err)
			}
			if ents, err := os.ReadDir(filepath.Join(dir, ".pkg", "staging")); err != nil || len(ents) != 0 {
				t.Errorf("staging after Rebuild: %v, %v; want it emptied", ents, err)
			}
			for _, pattern := range []string{"db.new", "db.rebuilt*", "db.damaged-*", "db.done-*"} {
				if left, _ := filepath.Glob(filepath.Join(dir, ".pkg", pattern)); len(left) != 0 {
					t.Errorf("Rebuild left %v beside the database", left)
				}
			}
			var ps []db.Record
			err = View(dir, Options{}, nil, func(d *db.DB) (err error) { ps, err = d.List(); return err })
			if err != nil || len(ps) != 0 {
				t.Errorf("records after Rebuild: %v, %v; want none", ps, err)
			}
		})
	}
}
