package install

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// appTree returns files for tree: n files under dir, a few in a subdirectory, each
// holding content.
func appTree(dir string, n int, content string, more ...string) []string {
	var files []string
	for i := range n {
		sub := ""
		if i%4 == 3 {
			sub = "sub/"
		}
		files = append(files, fmt.Sprintf("%s/%sf%02d=%s %d", dir, sub, i, content, i))
	}
	return append(files, more...)
}

// folded returns the record's folded directories of the package name in r.
func folded(t *testing.T, r *Root, name string) []string {
	t.Helper()
	rec, err := r.db.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Folded
}

// TestFold: a directory one package alone lists, of minFold entries or more, is moved into
// the prefix whole (the staged directory's own inode), a placeholder left in pkgs/;
// a directory the hierarchy shares (opt), or a small one, is not. An upgrade puts the new
// directory in its place by one exchange, a second package listing a path in it moves
// it back into the tree and has its files linked, and a remove takes it out.
func TestFold(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	apply := func(staged []*Staged, remove ...string) {
		t.Helper()
		if _, err := r.Apply(context.Background(), staged, remove); err != nil {
			t.Fatal(err)
		}
		checkPrefix(t, r)
	}
	a := stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one", "opt/small/x=1", "usr/share/doc/a/copyright=c")...))
	staged := inodeOf(filepath.Join(r.pathOf(place{staging, a.name}), "opt/app"))
	apply([]*Staged{a})
	if got := folded(t, r, "a"); !slices.Equal(got, []string{"opt/app"}) {
		t.Errorf("folded = %q, want opt/app alone", got)
	}
	if got := inodeOf(r.path("opt/app")); got != staged || staged == 0 {
		t.Errorf("opt/app is inode %d, want the staged directory's %d: one rename", got, staged)
	}
	if got := inodeOf(r.path("pkgs/a/opt/app/f00")); got != 0 {
		t.Error("pkgs/a/opt/app holds the files: not folded")
	}
	if b, err := os.ReadFile(r.path("opt/app/sub/f03")); err != nil || string(b) != "one 3" {
		t.Errorf("opt/app/sub/f03 = %q, %v", b, err)
	}

	a2 := stageIn(t, r, base, prefixPkg("a", "2"), tree(appTree("opt/app", 24, "two")...))
	staged = inodeOf(filepath.Join(r.pathOf(place{staging, a2.name}), "opt/app"))
	apply([]*Staged{a2})
	if got := inodeOf(r.path("opt/app")); got != staged {
		t.Errorf("after the upgrade opt/app is inode %d, want the new tree's %d", got, staged)
	}
	if b, err := os.ReadFile(r.path("opt/app/f22")); err != nil || string(b) != "two 22" {
		t.Errorf("opt/app/f22 = %q, %v", b, err)
	}
	if _, err := os.Lstat(r.path("opt/small")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("opt/small after the upgrade dropped it: %v", err)
	}

	apply([]*Staged{stageIn(t, r, base, prefixPkg("b", "1"), tree("opt/app/plugin/b=b"))})
	if got := folded(t, r, "a"); len(got) != 0 {
		t.Errorf("a's folded after b came: %q", got)
	}
	if inodeOf(r.path("opt/app/f00")) != inodeOf(r.path("pkgs/a/opt/app/f00")) || inodeOf(r.path("opt/app")) == staged {
		t.Error("opt/app is not linked file by file after b came")
	}
	apply(nil, "b")
	apply(nil, "a")
	if _, err := os.Lstat(r.path("opt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("opt after every package went: %v", err)
	}

	c := stageIn(t, r, base, prefixPkg("c", "1"), tree(appTree("srv/c/www", 16, "c")...))
	apply([]*Staged{c})
	if got := folded(t, r, "c"); !slices.Equal(got, []string{"srv/c"}) {
		t.Errorf("folded = %q, want srv/c", got)
	}
	apply(nil, "c")
	if _, err := os.Lstat(r.path("srv")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("srv after c went: %v", err)
	}
}

// TestFoldConflict: the paths bucket holds one key for a folded directory and none beneath
// it, and the conflict check finds the owner of a path beneath it by that key: a file or a
// directory of a's there is refused, naming a and the path, before anything changes; a
// package that replaces a takes a's file in its place (unfolding a), and removing it links
// a's back.
func TestFoldConflict(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one")...))}, nil); err != nil {
		t.Fatal(err)
	}
	owners, err := r.db.Owners([]string{"opt/app", "opt/app/f00", "opt/app/sub"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := owners["opt/app"]; !ok || len(owners) != 1 {
		t.Fatalf("keys %v, want opt/app's alone", slices.Sorted(maps.Keys(owners)))
	}
	dir := inodeOf(r.path("opt/app"))
	for _, c := range []struct {
		name  string
		files []string
		path  string
	}{
		{"file", []string{"opt/app/f00=b"}, "opt/app/f00"},
		{"file in a subdirectory", []string{"opt/app/sub/f03=b"}, "opt/app/sub/f03"},
		{"dir over file", []string{"opt/app/f01/x=b"}, "opt/app/f01"},
		{"file over dir", []string{"opt/app/sub=b"}, "opt/app/sub"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := stageIn(t, r, base, prefixPkg("b", "1"), tree(c.files...))
			_, err := r.Apply(context.Background(), []*Staged{s}, nil)
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Path != c.path || ce.Package != "b" || ce.Other != "a" {
				t.Fatalf("Apply = %v, want a ConflictError of b and a on %s", err, c.path)
			}
			if got := folded(t, r, "a"); !slices.Equal(got, []string{"opt/app"}) || inodeOf(r.path("opt/app")) != dir {
				t.Errorf("a's folded %q, opt/app inode %d: changed by a refused change", got, inodeOf(r.path("opt/app")))
			}
			checkPrefix(t, r)
		})
	}
	s := stageIn(t, r, base, prefixPkg("b", "1", "a"), tree("opt/app/f00=b"))
	if _, err := r.Apply(context.Background(), []*Staged{s}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(r.path("opt/app/f00")); err != nil || string(b) != "b" {
		t.Errorf("opt/app/f00 with b replacing a = %q, %v", b, err)
	}
	checkPrefix(t, r)
	must(t, r.uninstall("b"))
	if b, err := os.ReadFile(r.path("opt/app/f00")); err != nil || string(b) != "one 0" {
		t.Errorf("opt/app/f00 after b went = %q, %v", b, err)
	}
	checkPrefix(t, r)
}

// TestFoldSalvage: what the user adds in a folded directory is in the package's tree, and
// a remove keeps it in .pkg/saved, as in pkgs/NAME (an upgrade: TestFoldSalvageUpgrade).
func TestFoldSalvage(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one")...))}, nil); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(r.path("opt/app/notes"), []byte("the user's"), 0o644))
	must(t, r.uninstall("a"))
	i := slices.IndexFunc(r.Salvaged(), func(s Salvage) bool { return !s.Prefix && slices.Contains(s.Paths, "opt/app/notes") })
	if i < 0 {
		t.Fatalf("Salvaged = %+v, want opt/app/notes kept", r.Salvaged())
	}
	if b, err := os.ReadFile(filepath.Join(r.Salvaged()[i].Dir, "opt/app/notes")); err != nil || string(b) != "the user's" {
		t.Errorf("kept notes = %q, %v", b, err)
	}
	checkPrefix(t, r)
}

// TestFoldGoneSalvage: a folded directory the user deleted holds nothing of theirs, so the
// reinstall verify names, or a remove, keeps nothing: the whole old tree was kept in
// .pkg/saved, with a warning that pkg could not sort it out.
func TestFoldGoneSalvage(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one", "usr/share/doc/a/copyright=c")...))}, nil); err != nil {
		t.Fatal(err)
	}
	if got := folded(t, r, "a"); !slices.Equal(got, []string{"opt/app"}) {
		t.Fatalf("folded = %q", got)
	}
	must(t, os.RemoveAll(r.path("opt/app")))
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one", "usr/share/doc/a/copyright=c")...))}, nil); err != nil {
		t.Fatal(err)
	}
	if s := r.Salvaged(); len(s) != 0 {
		t.Errorf("Salvaged after reinstalling a package whose folded directory was deleted = %+v, want nothing kept", s)
	}
	checkPrefix(t, r)
	must(t, os.RemoveAll(r.path("opt/app")))
	must(t, r.uninstall("a"))
	if s := r.Salvaged(); len(s) != 0 {
		t.Errorf("Salvaged after removing a package whose folded directory was deleted = %+v, want nothing kept", s)
	}
}

// TestFoldVerify: verify reads a folded package's files in the prefix, and finds a change
// made there.
func TestFoldVerify(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one")...))}, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	must(t, os.WriteFile(r.path("opt/app/f00"), []byte("edited"), 0o644))
	must(t, os.Remove(r.path("opt/app/sub/f03")))
	problems, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Path)
	}
	if !slices.Equal(got, []string{"opt/app/f00", "opt/app/sub/f03"}) {
		t.Errorf("Verify found %v, want opt/app/f00 and opt/app/sub/f03", problems)
	}
}

// TestFoldClones installs on XFS and btrfs and proves with FIEMAP that a folded directory's
// files are the clones of the cache's tar, not copies.
func TestFoldClones(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			base := testfs.Mount(t, kind)
			r := openRoot(t, filepath.Join(base, "root"))
			defer r.Close()
			big := "opt/app/big=" + strings.Repeat("pkg folds ", 8<<10)
			if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one", big)...))}, nil); err != nil {
				t.Fatal(err)
			}
			if got := folded(t, r, "a"); !slices.Equal(got, []string{"opt/app"}) {
				t.Fatalf("folded = %q", got)
			}
			shared, _, err := testfs.SharedBytes(r.path("opt/app/big"))
			if err != nil || shared < 64<<10 {
				t.Errorf("opt/app/big: %d bytes shared, %v; want >= 64 KiB", shared, err)
			}
			checkPrefix(t, r)
		})
	}
}

// TestFoldRepair: a repair finds a folded directory from the trees alone (an empty
// placeholder where the archive has files, a directory at its prefix path) and records it
// so, and the start after links nothing into it.
func TestFoldRepair(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	p := prefixPkg("a", "1")
	members := installIn(t, r, base, p, tree(appTree("opt/app", 20, "one", "opt/one=1")...))
	app := inodeOf(r.path("opt/app"))
	r.Close()
	damage(t, dir)
	if _, err := Rebuild(context.Background(), dir, Options{}, func(string) ([]Candidate, error) {
		return []Candidate{{Package: p, Members: members}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r = openRoot(t, dir)
	defer r.Close()
	if got := folded(t, r, "a"); !slices.Equal(got, []string{"opt/app"}) {
		t.Errorf("folded after the repair = %q", got)
	}
	if inodeOf(r.path("opt/app")) != app {
		t.Error("opt/app was replaced by the repair")
	}
	checkPrefix(t, r)
}

// TestFoldCut cuts the roll-forward short before each move of a fold, unfold, upgrade and
// remove (a crash), then the start's roll-forward before each of its own moves (a crash
// while recovering): the start after that finishes it, never moving a directory back,
// and the prefix is the new set of packages. A file the user put in a placeholder before
// an upgrade or a remove is then in .pkg/saved at its prefix path, once.
func TestFoldCut(t *testing.T) {
	steps := []struct {
		name   string
		files  []string
		remove []string
		user   string // a placeholder, in pkgs/, given two files of the user's before the step
	}{
		{"a", appTree("opt/app", 20, "one"), nil, ""},
		{"a", appTree("opt/app", 24, "two"), nil, "a/opt/app"},
		{"b", []string{"opt/app/plugin/b=b"}, nil, ""},
		{"", nil, []string{"b", "a"}, ""},
		{"c", appTree("srv/c/www", 16, "c"), nil, ""},
		{"", nil, []string{"c"}, "c/srv/c"},
	}
	versions := map[string]int{}
	for k := range steps {
		for cut := 0; ; cut++ {
			var moves int
			for cut2 := 0; ; cut2++ {
				base := t.TempDir()
				dir := filepath.Join(base, "root")
				r := openRoot(t, dir)
				clear(versions)
				moves = 0
				for j, s := range steps[:k+1] {
					var staged []*Staged
					if s.user != "" {
						for _, n := range []string{"mine", "notes"} {
							must(t, os.WriteFile(filepath.Join(dir, "pkgs", s.user, fmt.Sprint(n, "-", j)), nil, 0o644))
						}
					}
					if s.name != "" {
						versions[s.name]++
						staged = append(staged, stageIn(t, r, base, prefixPkg(s.name, fmt.Sprint(versions[s.name])), tree(s.files...)))
					}
					if j == k {
						testHookFoldStep = func() bool { moves++; return moves > cut }
					}
					_, err := r.Apply(context.Background(), staged, s.remove)
					testHookFoldStep = nil
					if err != nil && !errors.Is(err, errFoldCut) {
						t.Fatalf("step %d cut at %d: %v", k, cut, err)
					}
				}
				r.Close()
				var moves2 int
				testHookFoldStep = func() bool { moves2++; return moves2 > cut2 }
				r = openRoot(t, dir)
				testHookFoldStep = nil
				r.Close()
				r = openRoot(t, dir)
				if p, done, err := r.db.Prefix(); err != nil || p != nil && !done {
					t.Errorf("step %d cut at %d, %d: pending after a start: %+v, %v", k, cut, cut2, p, err)
				}
				checkPrefix(t, r)
				for j, s := range steps[:k+1] {
					for _, n := range []string{"mine", "notes"} {
						if s.user == "" {
							continue
						}
						name, into := fmt.Sprint(n, "-", j), strings.SplitN(s.user, "/", 2)[1]
						var got []string
						filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
							if err == nil && d.Name() == name {
								got = append(got, p)
							}
							return nil
						})
						if want, _ := filepath.Glob(r.path(".pkg", "saved", "*-root.*", into, name)); len(got) != 1 || len(want) != 1 || got[0] != want[0] {
							t.Errorf("step %d cut at %d, %d: the user's %s in the placeholder %s is at %v, not once in .pkg/saved at %s", k, cut, cut2, name, s.user, got, into)
						}
					}
				}
				for _, part := range []string{"staging", "trash"} {
					if ents, _ := os.ReadDir(r.path(".pkg", part)); len(ents) != 0 {
						t.Errorf("step %d cut at %d, %d: %s after a start: %v", k, cut, cut2, part, ents)
					}
				}
				r.Close()
				if moves2 <= cut2 {
					break
				}
			}
			if moves <= cut {
				break
			}
		}
	}
}

// TestFoldSalvageUpgrade: an upgrade that folds the directory again keeps what the user
// added in it, and an upgrade cut short between its exchange and the old tree's going
// keeps it too, once the next start is done.
func TestFoldSalvageUpgrade(t *testing.T) {
	for cut := range 3 {
		base := t.TempDir()
		dir := filepath.Join(base, "root")
		r := openRoot(t, dir)
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one")...))}, nil); err != nil {
			t.Fatal(err)
		}
		must(t, os.WriteFile(r.path("opt/app/notes"), []byte("the user's"), 0o644))
		var moves int
		testHookFoldStep = func() bool { moves++; return moves > cut }
		_, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "2"), tree(appTree("opt/app", 24, "two")...))}, nil)
		testHookFoldStep = nil
		if err != nil && !errors.Is(err, errFoldCut) {
			t.Fatal(err)
		}
		r.Close()
		r = openRoot(t, dir)
		found, _ := filepath.Glob(filepath.Join(dir, ".pkg/saved/*/opt/app/notes"))
		whole, _ := filepath.Glob(filepath.Join(dir, ".pkg/saved/*/*/opt/app/notes")) // the tree kept whole
		if found = append(found, whole...); len(found) != 1 {
			t.Errorf("cut %d: notes kept at %v, want once", cut, found)
		} else if b, err := os.ReadFile(found[0]); err != nil || string(b) != "the user's" {
			t.Errorf("cut %d: kept notes = %q, %v", cut, b, err)
		}
		if _, err := os.Stat(r.path("opt/app/notes")); err == nil {
			t.Errorf("cut %d: notes still in the new tree", cut)
		}
		checkPrefix(t, r)
		r.Close()
		if moves <= cut {
			break
		}
	}
}

// TestFoldOverUser: a roll-forward cut short before its fold, re-run once the user made
// something at the fold's path, folds there all the same: over an empty directory, and
// over a file or a directory holding one after keeping it in .pkg/saved.
func TestFoldOverUser(t *testing.T) {
	tests := []struct {
		name string
		make func(dir string) error
		kept string // what is kept, under the salvage's Dir, and holds "the user's"; or ""
	}{
		{"empty", func(dir string) error { return os.Mkdir(dir, 0o755) }, ""},
		{"full", func(dir string) error {
			return errors.Join(os.Mkdir(dir, 0o755), os.WriteFile(filepath.Join(dir, "notes"), []byte("the user's"), 0o644))
		}, "opt/app/notes"},
		{"file", func(dir string) error { return os.WriteFile(dir, []byte("the user's"), 0o644) }, "opt/app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "root")
			r := openRoot(t, dir)
			a := stageIn(t, r, base, prefixPkg("a", "1"), tree(appTree("opt/app", 20, "one")...))
			staged := inodeOf(filepath.Join(r.pathOf(place{staging, a.name}), "opt/app"))
			testHookFoldStep = func() bool { return true }
			_, err := r.Apply(context.Background(), []*Staged{a}, nil)
			testHookFoldStep = nil
			if !errors.Is(err, errFoldCut) {
				t.Fatalf("Apply = %v, want it cut before the fold", err)
			}
			r.Close()
			must(t, tt.make(filepath.Join(dir, "opt/app")))
			r = openRoot(t, dir)
			defer r.Close()
			if got := inodeOf(r.path("opt/app")); got != staged || staged == 0 {
				t.Errorf("opt/app is inode %d, want the staged directory's %d", got, staged)
			}
			i := slices.IndexFunc(r.Salvaged(), func(s Salvage) bool { return s.Prefix && slices.Equal(s.Paths, []string{"opt/app"}) })
			switch {
			case tt.kept == "" && i >= 0:
				t.Errorf("Salvaged = %+v, want nothing kept", r.Salvaged())
			case tt.kept == "":
			case i < 0:
				t.Errorf("Salvaged = %+v, want opt/app kept", r.Salvaged())
			default:
				if b, err := os.ReadFile(filepath.Join(r.Salvaged()[i].Dir, tt.kept)); err != nil || string(b) != "the user's" {
					t.Errorf("kept %s = %q, %v", tt.kept, b, err)
				}
			}
			checkPrefix(t, r)
		})
	}
}

// TestFoldReinstallGone: installing a package again whose tree in pkgs/ was deleted by
// hand, or only the placeholder of its folded directory, makes the tree a fresh install
// makes (the placeholder back, the new directory folded), leaves nothing in staging or the
// trash once the staged trees are discarded, and the next start has nothing to say: the
// old folded directory went with the old tree, not to the trash as a tree a command cut
// short. An npm instance's own directory (package/, member of one level) and a directory
// folded deeper in its tree (opt/app) alike.
func TestFoldReinstallGone(t *testing.T) {
	npm := func(t *testing.T, r *Root, base string) *Staged { return stageNPM(t, r, base, "ms", "2.1.2") }
	app := func(t *testing.T, r *Root, base string) *Staged {
		return stageIn(t, r, base, prefixPkg("ms", "1"), tree(appTree("opt/app", 20, "one")...))
	}
	for _, c := range []struct {
		name   string
		stage  func(*testing.T, *Root, string) *Staged
		delete string // beneath pkgs/
	}{
		{"npm tree", npm, "ms@2.1.2"},
		{"npm placeholder", npm, "ms@2.1.2/package"},
		{"tree", app, "ms"},
		{"placeholder", app, "ms/opt/app"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "root")
			r := openRoot(t, dir)
			defer func() { r.Close() }()
			first := c.stage(t, r, base)
			key := first.rec.Key()
			if _, err := r.Apply(context.Background(), []*Staged{first}, nil); err != nil {
				t.Fatal(err)
			}
			if len(folded(t, r, key)) != 1 {
				t.Fatalf("%s folds %q, want one directory", key, folded(t, r, key))
			}
			must(t, os.RemoveAll(r.path("pkgs", c.delete)))
			again := c.stage(t, r, base)
			if _, err := r.Apply(context.Background(), []*Staged{again}, nil); err != nil {
				t.Fatal(err)
			}
			r.Discard(again)
			checkPrefix(t, r)
			if problems, err := r.Verify(); err != nil || len(problems) != 0 {
				t.Errorf("Verify after the reinstall = %v, %v; want nothing", problems, err)
			}
			for _, d := range []string{"staging", "trash"} {
				if es, err := os.ReadDir(r.path(".pkg", d)); err != nil || len(es) != 0 {
					t.Errorf(".pkg/%s after the reinstall holds %d entries (%v), want none", d, len(es), err)
				}
			}
			r.Close()
			r = openRoot(t, dir)
			if ns := r.Notes(); len(ns) != 0 {
				t.Errorf("the next start's notes: %+v, want none", ns)
			}
		})
	}
}

// TestFoldVerifyPlaceholder: verify reports the placeholder of an npm instance's folded
// directory that its tree lacks, or holds as a file, named by its path in pkgs/, and a
// file the user wrote in it, by its own path there; the files at the prefix path are as
// installed.
func TestFoldVerifyPlaceholder(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(string) error
		at    string // the problem's path below the placeholder
		kind  error
		more  []error
	}{
		{"gone", os.Remove, "", ErrMissing, nil},
		{"file", func(p string) error { return errors.Join(os.Remove(p), os.WriteFile(p, nil, 0o644)) }, "", ErrModified, []error{ErrType}},
		{"written in", func(p string) error { return os.WriteFile(filepath.Join(p, "notes.txt"), []byte("mine"), 0o644) }, "notes.txt", ErrExtra, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			r := openRoot(t, filepath.Join(base, "root"))
			defer r.Close()
			if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "ms", "2.1.2")}, nil); err != nil {
				t.Fatal(err)
			}
			holder := filepath.Join(r.pkgDir("ms@2.1.2"), "package")
			must(t, c.spoil(holder))
			if c.at != "" {
				holder = filepath.Join(holder, c.at)
			}
			problems, err := r.Verify()
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 || problems[0].Path != holder || !errors.Is(problems[0], c.kind) || !errors.Is(problems[0], ErrPlaceholder) {
				t.Fatalf("Verify = %v, want %s alone, %v", problems, holder, c.kind)
			}
			for _, m := range c.more {
				if !errors.Is(problems[0], m) {
					t.Errorf("Verify = %v, want it to match %v", problems[0], m)
				}
			}
		})
	}
}

// TestFoldVerifyPlaceholderClosed: verify, by a user who may not search a directory of a
// tree on the way to a folded directory's placeholder (its owner closed it, or root's
// tree read by another user), reports what the walk of the tree finds, the directory's
// mode, and goes on: its check of the placeholder failed the whole verify with 'lstat
// ...: permission denied', where it said 'verified' before.
func TestFoldVerifyPlaceholderClosed(t *testing.T) {
	if asNobody(t) {
		return
	}
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "ms", "2.1.2")}, nil); err != nil {
		t.Fatal(err)
	}
	tree := r.pkgDir("ms@2.1.2")
	must(t, os.Chmod(tree, 0o600))
	defer os.Chmod(tree, 0o755)
	problems, err := r.Verify()
	if err != nil {
		t.Fatalf("Verify with %s closed: %v", tree, err)
	}
	if len(problems) == 0 || slices.ContainsFunc(problems, func(p FileError) bool { return errors.Is(p, ErrPlaceholder) }) {
		t.Errorf("Verify with %s closed = %v, want its mode and no placeholder", tree, problems)
	}
}

// TestOwnDirNotFolded: the plan of a change leaves out the paths beneath a new npm
// instance's own directory, which folds whole; where it cannot fold, the plan is made
// again with them: beneath a directory already in the prefix (an empty one of the user's)
// the instance's files are linked one by one and each has its key, and a file another
// package of the change has there is refused as a conflict, naming it, before anything
// changes. Planned without them both changes went through, the first leaving files with no
// key and the second one file of two packages.
func TestOwnDirNotFolded(t *testing.T) {
	const own = "lib/node_modules/.pnpm/ms@2.1.2/node_modules/ms"
	t.Run("user's directory", func(t *testing.T) {
		base := t.TempDir()
		r := openRoot(t, filepath.Join(base, "root"))
		defer r.Close()
		must(t, os.MkdirAll(r.path(own), 0o755))
		if _, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "ms", "2.1.2")}, nil); err != nil {
			t.Fatal(err)
		}
		if f := folded(t, r, "ms@2.1.2"); len(f) != 0 {
			t.Errorf("ms folds %q over the user's directory, want nothing folded", f)
		}
		owners, err := r.db.Owners([]string{own + "/index.js"})
		if err != nil {
			t.Fatal(err)
		}
		if o := owners[own+"/index.js"]; !slices.Equal(o.Names, []string{"ms@2.1.2"}) {
			t.Errorf("owners of %s/index.js = %+v, want ms@2.1.2", own, o)
		}
		checkPrefix(t, r)
	})
	t.Run("conflict", func(t *testing.T) {
		base := t.TempDir()
		r := openRoot(t, filepath.Join(base, "root"))
		defer r.Close()
		other := stageIn(t, r, base, prefixPkg("x", "1"), tree(own+"/index.js=x's"))
		_, err := r.Apply(context.Background(), []*Staged{stageNPM(t, r, base, "ms", "2.1.2"), other}, nil)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Path != own+"/index.js" {
			t.Fatalf("Apply = %v, want a conflict at %s/index.js", err, own)
		}
		if es, err := os.ReadDir(r.path("pkgs")); err != nil || len(es) != 0 {
			t.Errorf("pkgs/ after the refusal: %d entries (%v), want none", len(es), err)
		}
	})
}

// TestOwnDirNotLookedUp: the plan of a new npm instance looks up none of its paths beneath
// its own directory, which folds whole: an instance of 43 files costs what one of 3 does.
func TestOwnDirNotLookedUp(t *testing.T) {
	looked := func(n int) int {
		base := t.TempDir()
		r := openRoot(t, filepath.Join(base, "root"))
		defer r.Close()
		files := appTree("package/lib", n, "x", `package/package.json={"name":"ms"}`, "package/cli.js=#!/usr/bin/env node\n")
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, npmPkg("ms", "2.1.2"), tree(files...))}, nil); err != nil {
			t.Fatal(err)
		}
		if f := folded(t, r, "ms@2.1.2"); !slices.Equal(f, []string{"package"}) {
			t.Fatalf("ms folds %q, want its own directory", f)
		}
		return r.looked
	}
	if few, many := looked(1), looked(41); few != many {
		t.Errorf("a new npm instance of 3 files looked up %d paths, of 43 files %d, want as many", few, many)
	}
}

// BenchmarkPrefixPlanNPM plans the prefix of a change of 200 new npm instances of 31 files
// each, each depending on the one before (the peers tree's shape: 229 instances, 7,050
// files): the plan leaves the paths beneath each instance's own directory out.
func BenchmarkPrefixPlanNPM(b *testing.B) {
	base := b.TempDir()
	r := openRoot(b, filepath.Join(base, "root"))
	defer r.Close()
	es := []entry{{name: "package/", typ: tar.TypeDir, mode: 0o755}, {name: "package/cli.js", typ: tar.TypeReg, mode: 0o755, data: "#!/usr/bin/env node\n"}, {name: "package/lib/", typ: tar.TypeDir, mode: 0o755}}
	for i := range 30 {
		es = append(es, entry{name: fmt.Sprintf("package/lib/f%02d.js", i), typ: tar.TypeReg, mode: 0o644, data: "x\n"})
	}
	tarPath := alignedTar(b, base, es)
	members, err := scanWithDigests(tarPath)
	if err != nil {
		b.Fatal(err)
	}
	var staged []*Staged
	for i := range 200 {
		var deps []string
		if i > 0 {
			deps = append(deps, fmt.Sprintf("n%03d", i-1))
		}
		s, err := r.Stage(context.Background(), tarPath, npmPkg(fmt.Sprintf("n%03d", i), "1.0.0", deps...), members)
		if err != nil {
			b.Fatal(err)
		}
		staged = append(staged, s)
	}
	defer r.Discard(staged...)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := r.prefixChange(nil, staged, nil, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
