package install

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"pkg/db"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// tree returns the entries of files, each "PATH=CONTENT" (a file) or "PATH->TARGET" (a
// symlink), with their directories.
func tree(files ...string) []entry {
	var es []entry
	dirs := map[string]bool{}
	for _, f := range files {
		name, data, isFile := strings.Cut(f, "=")
		link := ""
		if !isFile {
			name, link, _ = strings.Cut(f, "->")
		}
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				es = append(es, entry{name: d + "/", typ: tar.TypeDir, mode: 0o755})
			}
		}
		if isFile {
			es = append(es, entry{name: name, typ: tar.TypeReg, mode: 0o644, data: data})
		} else {
			es = append(es, entry{name: name, typ: tar.TypeSymlink, link: link})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return es
}

// prefixPkg is a package for the prefix tests, replacing the packages replaces names.
func prefixPkg(name, version string, replaces ...string) repo.Package {
	p := repo.Package{Name: name, Version: version, SHA256: strings.Repeat("a", 64)}
	p.Replaces = testrepo.Requires(replaces...)
	return p
}

// stageIn stages p's tree es in r.
func stageIn(t *testing.T, r *Root, base string, p repo.Package, es []entry) *Staged {
	t.Helper()
	tarPath := alignedTar(t, base, es)
	return stageMembers(t, r, tarPath, p, digestsOf(t, tarPath))
}

// inodeOf returns the inode at path, or 0.
func inodeOf(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

// checkPrefix checks that the root's prefix is exactly what its records say: each path a
// package lists is there, a directory as a directory and anything else as the inode of its
// top owner's member in pkgs/; nothing else is (but pkg's own .pkg, pkgs and command links
// in bin/); a folded directory has one key in the paths bucket and the paths beneath it
// none; and Verify finds nothing.
func checkPrefix(t *testing.T, r *Root) {
	t.Helper()
	owners, err := r.db.Owners(nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := r.db.List()
	if err != nil {
		t.Fatal(err)
	}
	folded := map[string]string{} // prefix path of a folded directory → its package
	for i := range recs {
		for j, d := range foldsOf(&recs[i]) {
			folded[d] = recs[i].Key()
			if es, err := os.ReadDir(filepath.Join(r.pkgDir(recs[i].Key()), recs[i].Folded[j])); err != nil || len(es) > 0 {
				t.Errorf("placeholder of %s's folded %s: %d entries, %v", recs[i].Name, d, len(es), err)
			}
		}
	}
	inFold := func(p, owner string) bool {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if folded[d] == owner {
				return true
			}
		}
		return false
	}
	for p, o := range owners {
		full := filepath.Join(r.Dir(), p)
		info, err := os.Lstat(full)
		switch {
		case err != nil:
			t.Errorf("prefix: %s: %v", p, err)
		case o.Dir && !info.IsDir():
			t.Errorf("prefix: %s is not a directory", p)
		case o.Link != "":
			if got, err := os.Readlink(full); err != nil || got != o.Link {
				t.Errorf("prefix: %s links to %q (%v), want %q", p, got, err, o.Link)
			}
		case inFold(p, o.Names[0]):
			t.Errorf("prefix: %s has a key of its own beneath %s's folded directory", p, o.Names[0])
		case !o.Dir && inodeOf(full) != inodeOf(filepath.Join(r.pkgDir(o.Names[0]), memberOf(t, r, o.Names[0], p))):
			t.Errorf("prefix: %s is not %s's", p, o.Names[0])
		}
	}
	err = filepath.WalkDir(r.Dir(), func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.Dir(), full)
		switch {
		case rel == ".":
			return nil
		case rel == ".pkg" || rel == "pkgs":
			return filepath.SkipDir
		case rel == "bin":
			return nil
		}
		_, ok := owners[rel]
		if ok && folded[rel] != "" {
			return filepath.SkipDir // the package's tree, which Verify checks
		}
		if !ok {
			if t2, err := r.readBin(strings.TrimPrefix(rel, "bin/")); strings.HasPrefix(rel, "bin/") && err == nil && ours(t2) {
				return nil
			}
			t.Errorf("prefix: %s is in the root and no package lists it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := r.Verify(); err != nil || len(problems) > 0 {
		t.Errorf("Verify: %v, %v", problems, err)
	}
}

// memberOf returns the member of the installed package name whose prefix path is p.
func memberOf(t *testing.T, r *Root, name, p string) string {
	t.Helper()
	rec, err := r.db.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	rf := &roll{r: r, recs: map[string]*db.Record{name: rec}}
	m, err := rf.memberOf(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPrefixShared installs two packages that share directories: each file is in the
// prefix as a hard link to its package's (no data written twice: one inode), removing one
// leaves the directory the other lists and the other's files, and removing both leaves an
// empty prefix.
func TestPrefixShared(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	a := stageIn(t, r, base, prefixPkg("a", "1"), tree("usr/lib/liba.so=a", "usr/share/doc/a/README=a", "usr/lib/liba.so.1->liba.so"))
	b := stageIn(t, r, base, prefixPkg("b", "1"), tree("usr/lib/libb.so=b", "usr/share/doc/b/README=b"))
	if _, err := r.Apply(context.Background(), []*Staged{a, b}, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	lib := r.path("usr/lib/liba.so")
	var st syscall.Stat_t
	if err := syscall.Stat(lib, &st); err != nil || st.Nlink != 2 || inodeOf(lib) != inodeOf(r.path("pkgs/a/usr/lib/liba.so")) {
		t.Errorf("%s: %d links, %v; want the package's inode, linked twice", lib, st.Nlink, err)
	}
	if got, err := os.Readlink(r.path("usr/lib/liba.so.1")); err != nil || got != "liba.so" {
		t.Errorf("symlink in the prefix: %q, %v", got, err)
	}
	must(t, r.uninstall("a"))
	checkPrefix(t, r)
	if _, err := os.Lstat(r.path("usr/share/doc/a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a's directory stays: %v", err)
	}
	must(t, r.uninstall("b"))
	checkPrefix(t, r)
	if _, err := os.Lstat(r.path("usr")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("usr stays with no package: %v", err)
	}
}

// TestPrefixConflict: a package with a path another has, whichever is installed, is
// refused before anything changes, naming both and the path; so is a directory where the
// other has a file, and two packages of one change that want one path.
func TestPrefixConflict(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree("etc/x=a", "etc/d=file"))}, nil); err != nil {
		t.Fatal(err)
	}
	x := r.path("etc/x")
	before := inodeOf(x)
	for _, c := range []struct {
		name  string
		files []string
		path  string
	}{
		{"same path", []string{"etc/x=b"}, "etc/x"},
		{"same content", []string{"etc/x=a"}, "etc/x"},
		{"dir over file", []string{"etc/d/y=b"}, "etc/d"},
		{"symlink over file", []string{"etc/x->y"}, "etc/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := stageIn(t, r, base, prefixPkg("b", "1"), tree(c.files...))
			_, err := r.Apply(context.Background(), []*Staged{s}, nil)
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Path != c.path || ce.Package != "b" || ce.Other != "a" || ce.OtherVersion != "1" {
				t.Fatalf("Apply = %v, want a ConflictError of b and a on %s", err, c.path)
			}
			if msg := err.Error(); !strings.Contains(msg, "a 1") || !strings.Contains(msg, "b 1") || !strings.Contains(msg, c.path) {
				t.Errorf("message %q does not name both and the path", msg)
			}
			if _, err := r.db.Get("b"); err == nil {
				t.Error("b was recorded")
			}
			if _, err := os.Lstat(r.pkgDir("b")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("pkgs/b: %v", err)
			}
			if inodeOf(x) != before {
				t.Error("etc/x changed")
			}
			checkPrefix(t, r)
		})
	}
	t.Run("both incoming", func(t *testing.T) {
		s1 := stageIn(t, r, base, prefixPkg("c", "1"), tree("opt/z=c"))
		s2 := stageIn(t, r, base, prefixPkg("d", "1"), tree("opt/z=d"))
		_, err := r.Apply(context.Background(), []*Staged{s1, s2}, nil)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Path != "opt/z" || ce.Package != "d" || ce.Other != "c" || !ce.Incoming {
			t.Fatalf("Apply = %v, want a ConflictError of d and c on opt/z", err)
		}
		checkPrefix(t, r)
	})
	t.Run("command link over file", func(t *testing.T) {
		p := prefixPkg("e", "1")
		p.Bin = testrepo.Commands("x=etc/e")
		s1 := stageIn(t, r, base, p, tree("etc/e=e"))
		s2 := stageIn(t, r, base, prefixPkg("f", "1"), tree("bin/x=f"))
		_, err := r.Apply(context.Background(), []*Staged{s1, s2}, nil)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Path != "bin/x" || !ce.Command {
			t.Fatalf("Apply = %v, want a ConflictError on bin/x", err)
		}
		checkPrefix(t, r)
	})
}

// TestPrefixReplaces: a package that replaces another takes its file in the prefix, and
// the other's comes back when it goes; installed the other way round, the replaced package
// goes under. Removing or upgrading either leaves the right file, and the prefix is what
// the records say after each step.
func TestPrefixReplaces(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	x := r.path("etc/x")
	has := func(want string) {
		t.Helper()
		b, err := os.ReadFile(x)
		if err != nil || string(b) != want {
			t.Errorf("etc/x = %q, %v; want %q", b, err, want)
		}
		checkPrefix(t, r)
	}
	install := func(p repo.Package, files ...string) {
		t.Helper()
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p, tree(files...))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	install(prefixPkg("old", "1"), "etc/x=old 1", "etc/old=1")
	install(prefixPkg("new", "1", "old<2"), "etc/x=new 1")
	has("new 1")
	install(prefixPkg("old", "1.5"), "etc/x=old 1.5", "etc/old=1.5") // still replaced: goes under
	has("new 1")
	must(t, r.uninstall("new"))
	has("old 1.5")
	install(prefixPkg("new", "1", "old<2"), "etc/x=new 1")
	has("new 1")
	install(prefixPkg("new", "2", "old<2"), "etc/x=new 2")
	has("new 2")
	must(t, r.uninstall("old"))
	has("new 2")
	must(t, r.uninstall("new"))
	if _, err := os.Lstat(x); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("etc/x with no package: %v", err)
	}
	checkPrefix(t, r)

	// The replacing package first: the replaced one goes under it.
	install(prefixPkg("new", "2", "old<2"), "etc/x=new 2")
	install(prefixPkg("old", "1"), "etc/x=old 1")
	has("new 2")
	// old 2 is not replaced by new 2: its file cannot go under, nor over.
	s := stageIn(t, r, base, prefixPkg("old", "2"), tree("etc/x=old 2"))
	var ce *ConflictError
	if _, err := r.Apply(context.Background(), []*Staged{s}, nil); !errors.As(err, &ce) || ce.Other != "new" {
		t.Errorf("upgrade of old past what new replaces = %v, want a ConflictError", err)
	}
	has("new 2")
	must(t, r.uninstall("new"))
	has("old 1")
}

// TestPrefixUpgrade: an upgrade relinks its paths to the new tree, drops the paths it no
// longer has and the directories they leave empty, keeps a file of the user's put in place
// of one of its files (in .pkg/saved, said), and leaves a directory holding the user's.
func TestPrefixUpgrade(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	install := func(v string, files ...string) {
		t.Helper()
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", v), tree(files...))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	install("1", "usr/x=1", "usr/gone/y=1", "usr/mine/z=1", "usr/edited=1")
	must(t, os.Remove(r.path("usr/edited")))
	must(t, os.WriteFile(r.path("usr/edited"), []byte("the user's"), 0o644))
	must(t, os.WriteFile(r.path("usr/mine/notes"), []byte("the user's"), 0o644))
	install("2", "usr/x=2", "usr/edited=2")
	if b, _ := os.ReadFile(r.path("usr/x")); string(b) != "2" {
		t.Errorf("usr/x = %q after the upgrade", b)
	}
	for _, gone := range []string{"usr/gone", "usr/mine/z"} {
		if _, err := os.Lstat(r.path(gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s stays: %v", gone, err)
		}
	}
	if _, err := os.Lstat(r.path("usr/mine/notes")); err != nil {
		t.Errorf("the user's notes: %v", err)
	}
	var kept *Salvage
	for i, s := range r.Salvaged() {
		if s.Prefix {
			kept = &r.Salvaged()[i]
		}
	}
	if kept == nil || !slices.Equal(kept.Paths, []string{"usr/edited"}) || !slices.Equal(kept.Left, []string{"usr/mine"}) {
		t.Fatalf("Salvaged = %+v, want usr/edited kept and usr/mine left", r.Salvaged())
	}
	if b, err := os.ReadFile(filepath.Join(kept.Dir, "usr/edited")); err != nil || string(b) != "the user's" {
		t.Errorf("kept usr/edited = %q, %v", b, err)
	}
	must(t, os.Remove(r.path("usr/mine/notes")))
	must(t, os.Remove(r.path("usr/mine")))
	checkPrefix(t, r)
}

// TestPrefixRollForward cuts commits short between their records and their links (a
// crash): the next start finishes the prefix, before the old trees it compares with go.
func TestPrefixRollForward(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("a", "1"), tree("usr/x=1", "usr/old=1"))}, nil); err != nil {
		t.Fatal(err)
	}
	crash := func(staged []*Staged, remove ...string) {
		t.Helper()
		testHookRecorded = func() bool { return true }
		defer func() { testHookRecorded = nil }()
		if _, err := r.Apply(context.Background(), staged, remove); err != nil {
			t.Fatal(err)
		}
		if p, done, err := r.db.Prefix(); err != nil || p == nil || done {
			t.Fatalf("pending after the records: %v, %v", p, err)
		}
		r.Close()
		r = openRoot(t, dir)
		if p, done, err := r.db.Prefix(); err != nil || p != nil && !done {
			t.Errorf("pending after a start: %v, %v", p, err)
		}
		checkPrefix(t, r)
		if ents, _ := os.ReadDir(r.path(".pkg", "staging")); len(ents) != 0 {
			t.Errorf("staging after a start: %v", ents)
		}
	}
	crash([]*Staged{stageIn(t, r, base, prefixPkg("a", "2"), tree("usr/x=2", "usr/new=2"))})
	if b, _ := os.ReadFile(r.path("usr/x")); string(b) != "2" {
		t.Errorf("usr/x = %q after the roll-forward", b)
	}
	crash([]*Staged{stageIn(t, r, base, prefixPkg("b", "1"), tree("opt/b=1"))}, "a")
	if _, err := os.Lstat(r.path("usr")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("usr after a's removal rolled forward: %v", err)
	}
	r.Close()
}

// TestPrefixCost: installing one small package into a root that holds a large one looks
// up and links the small one's paths only.
func TestPrefixCost(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	var big []string
	for i := range 2000 {
		big = append(big, "usr/src/d"+string(rune('a'+i%26))+"/f"+strings.Repeat("x", i%7)+string(rune('a'+i/26%26))+string(rune('a'+i/676))+"=x")
	}
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("big", "1"), tree(big...))}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("small", "1"), tree("usr/src/one=1"))}, nil); err != nil {
		t.Fatal(err)
	}
	// usr, usr/src and usr/src/one, each checked once and rolled forward once.
	if r.looked != 6 {
		t.Errorf("a one-file install into a root of 2,000 files looked up %d paths, want 6", r.looked)
	}
	checkPrefix(t, r)
}

// TestPrefixReserved refuses a package with a member where pkg keeps its own.
func TestPrefixReserved(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	for _, files := range [][]string{{".pkg/db=x"}, {"pkgs/a/x=x"}, {"bin=x"}} {
		tarPath := alignedTar(t, base, tree(files...))
		members, err := scanWithDigests(tarPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Stage(context.Background(), tarPath, prefixPkg("a", "1"), members); !errors.Is(err, ErrReserved) {
			t.Errorf("Stage of %v = %v, want ErrReserved", files, err)
		}
	}
}

// TestCommandReplaces: a package that replaces another takes its command as it takes its
// files, at the same path or another (bin/x then leads to its own), and gives it back
// when it goes; installed the other way round, the replaced package's command goes
// under; past the version the Replaces covers, the command is refused as the file is.
func TestCommandReplaces(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	pkgWith := func(name, version, cmd string, replaces ...string) repo.Package {
		p := prefixPkg(name, version, replaces...)
		p.Bin = testrepo.Commands(cmd)
		return p
	}
	install := func(p repo.Package, files ...string) {
		t.Helper()
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p, tree(files...))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	runs := func(want string) {
		t.Helper()
		b, err := os.ReadFile(r.path("bin", "x"))
		if err != nil || string(b) != want {
			t.Errorf("bin/x reads %q, %v; want %q", b, err, want)
		}
		checkPrefix(t, r)
	}
	old := pkgWith("old", "1", "usr/bin/x")
	install(old, "usr/bin/x=old 1")
	install(pkgWith("new", "1", "usr/bin/x", "old<2"), "usr/bin/x=new 1")
	runs("new 1")
	must(t, r.uninstall("new"))
	runs("old 1")

	install(pkgWith("moved", "1", "x=usr/lib/moved/x", "old<2"), "usr/lib/moved/x=moved 1")
	runs("moved 1")
	if got, err := os.Readlink(r.path("bin", "x")); err != nil || got != "../usr/lib/moved/x" {
		t.Errorf("bin/x -> %q, %v; want the replacing package's", got, err)
	}
	install(pkgWith("old", "1.5", "usr/bin/x"), "usr/bin/x=old 1.5") // still replaced: goes under
	runs("moved 1")
	must(t, r.uninstall("moved"))
	runs("old 1.5")
	must(t, r.uninstall("old"))

	// The replacing package first: the replaced one's command goes under it.
	install(pkgWith("moved", "1", "x=usr/lib/moved/x", "old<2"), "usr/lib/moved/x=moved 1")
	install(old, "usr/bin/x=old 1")
	runs("moved 1")
	// old 2 is not replaced by moved 1: its command can go neither under nor over.
	s := stageIn(t, r, base, pkgWith("old", "2", "usr/bin/x"), tree("usr/bin/x=old 2"))
	var ce *clashError
	if _, err := r.Apply(context.Background(), []*Staged{s}, nil); !errors.As(err, &ce) || ce.Other != "moved" {
		t.Errorf("upgrade of old past what moved replaces = %v, want a *clashError naming moved", err)
	}
	runs("moved 1")
	must(t, r.uninstall("moved"))
	runs("old 1")
}

// cmdPkg is a prefix test's package with the command cmd ([NAME=]PATH), replacing the
// packages replaces names.
func cmdPkg(name, version, cmd string, replaces ...string) repo.Package {
	p := prefixPkg(name, version, replaces...)
	p.Bin = testrepo.Commands(cmd)
	return p
}

// runsX fails t unless bin/x reads want and the prefix is as recorded.
func runsX(t *testing.T, r *Root, want string) {
	t.Helper()
	b, err := os.ReadFile(r.path("bin", "x"))
	if err != nil || string(b) != want {
		t.Errorf("bin/x reads %q, %v; want %q", b, err, want)
	}
	checkPrefix(t, r)
}

// TestCommandHolderCut cuts a commit that gives a command back to the package its holder
// replaced (a removal, an upgrade dropping the command) once the trash is emptied, before
// bin/'s sync, as a crash would: the next start links the command of the package that
// holds it now.
func TestCommandHolderCut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *Root, base string) ([]*Staged, []string)
	}{
		{"remove", func(*Root, string) ([]*Staged, []string) { return nil, []string{"moved"} }},
		{"upgrade", func(r *Root, base string) ([]*Staged, []string) {
			return []*Staged{stageIn(t, r, base, prefixPkg("moved", "2", "old<2"), tree("usr/lib/moved/y=moved 2"))}, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "root")
			r := openRoot(t, dir)
			defer func() { r.Close() }()
			for _, s := range []*Staged{
				stageIn(t, r, base, cmdPkg("old", "1", "usr/bin/x"), tree("usr/bin/x=old 1")),
				stageIn(t, r, base, cmdPkg("moved", "1", "x=usr/lib/moved/x", "old<2"), tree("usr/lib/moved/x=moved 1")),
			} {
				if _, err := r.Apply(context.Background(), []*Staged{s}, nil); err != nil {
					t.Fatal(err)
				}
			}
			runsX(t, r, "moved 1")
			staged, remove := tc.change(r, base)
			testHookTrashed = func() bool { return true }
			_, err := r.Apply(context.Background(), staged, remove)
			testHookTrashed = nil
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			r = openRoot(t, dir)
			if got, err := os.Readlink(r.path("bin", "x")); err != nil || got != "../usr/bin/x" {
				t.Errorf("bin/x -> %q, %v after a start; want old's command", got, err)
			}
			runsX(t, r, "old 1")
		})
	}
}

// TestCommandChain: in a chain of Replaces (a replaces b, which replaces c, and a not c),
// bin/ holds the command of the package on top, and an upgrade of the middle keeps it so;
// a removal of the middle, or an upgrade that drops its command, which would leave a and
// c providing the command, neither replacing the other, is refused.
func TestCommandChain(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	install := func(p repo.Package, files ...string) {
		t.Helper()
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p, tree(files...))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	install(cmdPkg("c", "1", "x=usr/lib/c/x"), "usr/lib/c/x=c 1")
	install(cmdPkg("b", "1", "x=usr/lib/b/x", "c<2"), "usr/lib/b/x=b 1")
	install(cmdPkg("a", "1", "x=usr/lib/a/x", "b<2"), "usr/lib/a/x=a 1")
	runsX(t, r, "a 1")
	install(cmdPkg("b", "1.5", "x=usr/lib/b/x", "c<2"), "usr/lib/b/x=b 1.5")
	runsX(t, r, "a 1")
	recs, err := r.db.List()
	if err != nil {
		t.Fatal(err)
	}
	var se *strandedError
	if err := CheckChange(r.Dir(), recs, nil, []string{"b"}); !errors.As(err, &se) || se.Change != "remove b" {
		t.Errorf("CheckChange of removing b from between a and c: %v, want a *strandedError", err)
	}
	if err := r.uninstall("b"); !errors.As(err, &se) || se.Package+se.Other != "ac" && se.Package+se.Other != "ca" {
		t.Errorf("removing b from between a and c: %v, want a *strandedError naming a and c", err)
	}
	s := stageIn(t, r, base, prefixPkg("b", "2", "c<2"), tree("usr/lib/b/y=b 2"))
	if _, err := r.Apply(context.Background(), []*Staged{s}, nil); !errors.As(err, &se) || se.Change != "install b 2" {
		t.Errorf("upgrading b to a version without the command: %v, want a *strandedError", err)
	}
	runsX(t, r, "a 1")
	must(t, r.uninstall("a", "b"))
	runsX(t, r, "c 1")
}

// TestCommandMember: a replacing package takes a command the replaced one links from
// elsewhere by shipping the member bin/x, and gives it back when it goes; it cannot take
// a command the replaced one ships as the member bin/x by a link from elsewhere, whichever
// is installed first (a command link of one where the other has its member: ConflictError).
func TestCommandMember(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	install := func(p repo.Package, files ...string) error {
		t.Helper()
		_, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p, tree(files...))}, nil)
		return err
	}
	must(t, install(cmdPkg("old", "1", "x=usr/lib/old/x"), "usr/lib/old/x=old 1"))
	must(t, install(cmdPkg("new", "1", "bin/x", "old<2"), "bin/x=new 1"))
	runsX(t, r, "new 1")
	must(t, r.uninstall("new"))
	runsX(t, r, "old 1")
	must(t, r.uninstall("old"))

	must(t, install(cmdPkg("old", "1", "bin/x"), "bin/x=old 1"))
	var ce *ConflictError
	if err := install(cmdPkg("moved", "1", "x=usr/lib/moved/x", "old<2"), "usr/lib/moved/x=moved 1"); !errors.As(err, &ce) || !ce.Command {
		t.Errorf("a link over a replaced package's member bin/x: %v, want a *ConflictError", err)
	}
	runsX(t, r, "old 1")
	must(t, r.uninstall("old"))
	must(t, install(cmdPkg("moved", "1", "x=usr/lib/moved/x", "old<2"), "usr/lib/moved/x=moved 1"))
	if err := install(cmdPkg("old", "1", "bin/x"), "bin/x=old 1"); !errors.As(err, &ce) || !ce.Command {
		t.Errorf("a replaced package's member bin/x under a link: %v, want a *ConflictError", err)
	}
	runsX(t, r, "moved 1")
}

// TestWrapperCut cuts a commit before its sync of bin/ (testHookTrashed) where it changes
// the library directories of a package that a command's package, which it does not stage,
// depends on, directly or not: the start must rewrite the command's wrapper.
func TestWrapperCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  string // app's command
		via  bool   // app depends on l through m
		old  string // l 1's library directory, or none
	}{
		{"wrapper", "x=usr/lib/app/x", false, "usr/lib/l1"},
		{"indirect", "x=usr/lib/app/x", true, "usr/lib/l1"},
		{"link becomes wrapper", "x=usr/lib/app/x", false, ""},
		{"member becomes wrapper", "bin/x", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "root")
			r := openRoot(t, dir)
			defer func() { r.Close() }()
			l := func(v, d string) *Staged {
				p := prefixPkg("l", v)
				if d == "" {
					return stageIn(t, r, base, p, tree("usr/share/l/v="+v))
				}
				p.Lib = []string{d}
				return stageIn(t, r, base, p, tree(d+"/so="+v))
			}
			app := cmdPkg("app", "1", tc.cmd)
			app.Depends = testrepo.Requires("l")
			at := strings.TrimPrefix(tc.cmd, "x=")
			stages := []*Staged{l("1", tc.old)}
			if tc.via {
				m := prefixPkg("m", "1")
				m.Depends = testrepo.Requires("l")
				app.Depends = testrepo.Requires("m")
				stages = append(stages, stageIn(t, r, base, m, tree("usr/share/m/m=1")))
			}
			stages = append(stages, stageIn(t, r, base, app, tree(at+"=app 1")))
			for _, s := range stages {
				if _, err := r.Apply(context.Background(), []*Staged{s}, nil); err != nil {
					t.Fatal(err)
				}
			}
			testHookTrashed = func() bool { return true }
			_, err := r.Apply(context.Background(), []*Staged{l("2", "usr/lib/l2")}, nil)
			testHookTrashed = nil
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			r = openRoot(t, dir)
			b, err := os.ReadFile(r.path("bin", "x"))
			if err != nil || !strings.Contains(string(b), "usr/lib/l2") || tc.old != "" && strings.Contains(string(b), tc.old) {
				t.Errorf("bin/x after a start: %v\n%s\nwant a wrapper naming usr/lib/l2 alone", err, b)
			}
			if problems, err := r.Verify(); err != nil || len(problems) > 0 {
				t.Errorf("Verify after a start: %v, %v", problems, err)
			}
		})
	}
}

// TestUnwrapCut: a command that is its package's own member, wrapped while a dependency
// declared library directories, goes back to the member when an upgrade of the dependency
// drops them, also after a cut before the sync of bin/ (helper-138's review).
func TestUnwrapCut(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut %v", cut), func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "root")
			r := openRoot(t, dir)
			defer func() { r.Close() }()
			l1 := prefixPkg("l", "1")
			l1.Lib = []string{"usr/lib/l1"}
			app := cmdPkg("app", "1", "bin/x")
			app.Depends = testrepo.Requires("l")
			for _, s := range []*Staged{stageIn(t, r, base, l1, tree("usr/lib/l1/so=1")), stageIn(t, r, base, app, tree("bin/x=app 1"))} {
				if _, err := r.Apply(context.Background(), []*Staged{s}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(r.path("bin", "x")); err != nil || !strings.HasPrefix(string(b), wrapperHead) {
				t.Fatalf("bin/x with l 1's library directory: %v %q, want a wrapper", err, b)
			}
			testHookTrashed = func() bool { return cut }
			_, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("l", "2"), tree("usr/share/l/v=2"))}, nil)
			testHookTrashed = nil
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			r = openRoot(t, dir)
			if b, err := os.ReadFile(r.path("bin", "x")); err != nil || string(b) != "app 1" {
				t.Errorf("bin/x: %v %q, want app's own file", err, b)
			}
			if _, err := os.Lstat(r.path("bin", ".x.new")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("bin/.x.new left: %v", err)
			}
			if problems, err := r.Verify(); err != nil || len(problems) > 0 {
				t.Errorf("Verify: %v, %v", problems, err)
			}
		})
	}
}

// TestWrapperPrepareError has the link a change prepares for a package it does not stage
// fail: the change is refused naming itself and the command, and bin/ is left as it was.
func TestWrapperPrepareError(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	l := func(v string) *Staged {
		p := prefixPkg("l", v)
		p.Lib = []string{"usr/lib/l" + v}
		return stageIn(t, r, base, p, tree("usr/lib/l"+v+"/so="+v))
	}
	app := cmdPkg("app", "1", "x=usr/lib/app/x")
	app.Depends = testrepo.Requires("l")
	for _, s := range []*Staged{l("1"), stageIn(t, r, base, app, tree("usr/lib/app/x=app 1"))} {
		if _, err := r.Apply(context.Background(), []*Staged{s}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(r.path("bin", "x"))
	must(t, os.WriteFile(r.path("bin", ".x.new"), []byte("the user's"), 0o644))
	_, err := r.Apply(context.Background(), []*Staged{l("2")}, nil)
	if want := "install l 2: command x of app 1: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("upgrading l with bin/.x.new in the way: %v, want an error starting %q", err, want)
	}
	if after, _ := os.ReadFile(r.path("bin", "x")); string(after) != string(before) {
		t.Errorf("bin/x after the refused change:\n%s\nwant\n%s", after, before)
	}
}

// TestCommandChainCross upgrades the middle of a chain (a replaces b<2, b replaces c<2) to
// a version that still provides the command but that a's Replaces does not cover: the
// refusal is b 2's clash with a, as it is once c is gone, not a stranding of a beside c.
func TestCommandChainCross(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	install := func(p repo.Package, files ...string) error {
		_, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p, tree(files...))}, nil)
		return err
	}
	must(t, install(cmdPkg("c", "1", "x=usr/lib/c/x"), "usr/lib/c/x=c 1"))
	must(t, install(cmdPkg("b", "1", "x=usr/lib/b/x", "c<2"), "usr/lib/b/x=b 1"))
	must(t, install(cmdPkg("a", "1", "x=usr/lib/a/x", "b<2"), "usr/lib/a/x=a 1"))
	for _, step := range []string{"with c", "without c"} {
		err := install(cmdPkg("b", "2", "x=usr/lib/b/x", "c<2"), "usr/lib/b/x=b 2")
		if ce := (*clashError)(nil); !errors.As(err, &ce) || ce.Package != "b" || ce.Version != "2" || ce.Other != "a" {
			t.Errorf("%s: upgrading b to 2 out of a's Replaces: %T %v, want b 2's *clashError with a", step, err, err)
		}
		runsX(t, r, "a 1")
		if step == "with c" {
			must(t, r.uninstall("c"))
		}
	}
}

// TestCommandStrayNamesChange: where the package a stray would be left beside is the one
// the change upgrades, the refusal is that upgrade's: b 2, out of the Replaces that
// stacked it, still provides x beside a (helper-138's review found it unnamed, "change").
func TestCommandStrayNamesChange(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	var ss []*Staged
	for _, p := range []repo.Package{cmdPkg("a", "1", "x=usr/lib/a/x", "c<2"), cmdPkg("b", "1", "x=usr/lib/b/x", "c<2", "d"),
		cmdPkg("c", "1", "x=usr/lib/c/x", "d"), cmdPkg("d", "1", "x=usr/lib/d/x", "a<2")} {
		ss = append(ss, stageIn(t, r, base, p, tree("usr/lib/"+p.Name+"/x="+p.Name+" 1")))
	}
	if _, err := r.Apply(context.Background(), ss, nil); err != nil {
		t.Fatalf("the four together: %v", err)
	}
	_, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, cmdPkg("b", "2", "x=usr/lib/b/x"), tree("usr/lib/b/x=b 2"))}, nil)
	ce, se := (*clashError)(nil), (*strandedError)(nil)
	switch {
	case errors.As(err, &ce):
		if ce.Package != "b" || ce.Version != "2" {
			t.Errorf("upgrading b to 2: %v, want b 2's clash", err)
		}
	case errors.As(err, &se):
		if se.Change != "install b 2" {
			t.Errorf("upgrading b to 2: %v, want the change named", err)
		}
	default:
		t.Errorf("upgrading b to 2: %T %v, want it refused", err, err)
	}
}

// TestPrefixTreeGone: the tree of a package under another in a Replaces stack, deleted by
// hand (rm -rf ROOT/pkgs/old), does not stop the removal of the one on top, whose
// roll-forward links the path back from that tree: a file deleted from a tree is skipped
// so, and verify says what is gone. Stopped, the roll-forward left every later command
// refused, the reinstall that puts the tree back and the repair included.
func TestPrefixTreeGone(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	r := openRoot(t, dir)
	for _, p := range []struct {
		p     repo.Package
		files []string
	}{
		{prefixPkg("old", "1"), []string{"etc/x=old 1", "etc/old=1"}},
		{prefixPkg("new", "1", "old<2"), []string{"etc/x=new 1"}},
	} {
		if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, p.p, tree(p.files...))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.RemoveAll(r.pkgDir("old")))
	if err := r.uninstall("new"); err != nil {
		t.Fatalf("removing new over old's tree deleted by hand: %v", err)
	}
	r.Close()
	r = openRoot(t, dir)
	defer r.Close()
	problems, err := r.Verify()
	if err != nil || len(problems) != 1 || problems[0].Package != "old" || !errors.Is(problems[0].Err, ErrPackageDir) {
		t.Errorf("Verify with old's tree gone: %v, %v; want old's package directory missing alone", problems, err)
	}
	if _, err := r.Apply(context.Background(), []*Staged{stageIn(t, r, base, prefixPkg("old", "1"), tree("etc/x=old 1", "etc/old=1"))}, nil); err != nil {
		t.Fatalf("installing old again: %v", err)
	}
	if b, err := os.ReadFile(r.path("etc/x")); err != nil || string(b) != "old 1" {
		t.Errorf("etc/x after old's reinstall = %q, %v", b, err)
	}
	checkPrefix(t, r)
}
