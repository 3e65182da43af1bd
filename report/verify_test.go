package report

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
)

func TestVerifyOf(t *testing.T) {
	recs := []db.Record{{Name: "a", Files: 2}, {Name: "b", Files: 3}}
	if got := VerifyOf(recs, nil, nil).Text(); got != "verified 2 packages, 5 files" {
		t.Errorf("VerifyOf all: %q", got)
	}
	ps := []install.FileError{
		{Package: "b", Version: "1.0", Path: "x", Err: install.ErrMissing},
		{Package: "b", Version: "1.0", Path: "/r/bin/b", Err: fmt.Errorf("%w (%w, %w)", install.ErrModified, install.ErrCommandLink, install.ErrForeign)},
	}
	v := VerifyOf(recs, []string{"b"}, ps)
	if v.Packages != 1 || v.Files != 3 || v.Text() != "2 problems found" {
		t.Errorf("VerifyOf b: %+v, %q", v, v.Text())
	}
	pkgs, foreign, lacking, _, _ := Repair(ps)
	if !slices.Equal(pkgs, []string{"b"}) || !slices.Equal(foreign, []string{"/r/bin/b"}) || lacking != nil {
		t.Errorf("Repair = %q, %q, %q; want [b], [/r/bin/b], none", pkgs, foreign, lacking)
	}
	// A package a dependency is missing of is installed again, which installs it, and
	// said to lack it.
	dep := install.FileError{Package: "a", Version: "1.0", Requirement: "lib>=1", Err: fmt.Errorf("%w (%w)", install.ErrMissing, install.ErrDependency)}
	if pkgs, _, lacking, _, _ := Repair(append([]install.FileError{dep}, ps...)); !slices.Equal(pkgs, []string{"a", "b"}) || !slices.Equal(lacking, []string{"a"}) {
		t.Errorf("Repair with a's dependency missing = %q, lacking %q; want [a b] installed again and [a] lacking", pkgs, lacking)
	}
	var b strings.Builder
	want := "b 1.0: missing x\nb 1.0: modified /r/bin/b (command link, a file not pkg's in its place)\n"
	if err := v.WriteText(&b); err != nil || b.String() != want {
		t.Errorf("WriteText: %q, %v; want %q", b.String(), err, want)
	}
	if got, want := newVerify(1, 2, []install.FileError{dep}).Problems[0].String(), "a 1.0: missing lib>=1 (dependency)"; got != want {
		t.Errorf("a's dependency missing: %q; want %q", got, want)
	}
	// A file cloned from a damaged cache entry names the entry, and its package is said to
	// need the entry fetched again, as well as reinstalled.
	damaged := install.FileError{Package: "c", Version: "2", Path: "f", Entry: "abc", Err: fmt.Errorf("%w (%w)", install.ErrCacheDamaged, install.ErrContent)}
	if got, want := newVerify(1, 1, []install.FileError{damaged}).Problems[0].String(), "c 2: damaged f (content: cloned from the damaged cache entry abc, not changed in the root)"; got != want {
		t.Errorf("c's file cloned from a damaged entry: %q; want %q", got, want)
	}
	if pkgs, _, _, _, fetch := Repair([]install.FileError{damaged, damaged}); !slices.Equal(pkgs, []string{"c"}) || !slices.Equal(fetch, []string{"c"}) {
		t.Errorf("Repair of c's two files cloned from a damaged entry = %q, damaged %q; want [c] and [c]", pkgs, fetch)
	}
}

// TestVerifyInRoot checks that a problem of an npm package's file names it where the root
// has it, under lib/node_modules/, not by its member path, whose directory the package
// directory holds only a placeholder of; and a Debian package's as its path.
func TestVerifyInRoot(t *testing.T) {
	const into = "lib/node_modules/.pnpm/eslint@9.39.5/node_modules/eslint"
	recs := []db.Record{{Name: "eslint", Version: "9.39.5", Kind: repo.KindNPM, Into: into, Files: 2}, {Name: "go", Version: "1.19", Kind: repo.KindDeb, Files: 1}}
	ps := []install.FileError{
		{Package: "eslint", Version: "9.39.5", Kind: repo.KindNPM, Path: "package/lib/linter.js", Err: fmt.Errorf("%w (%w)", install.ErrModified, install.ErrSize)},
		{Package: "eslint", Version: "9.39.5", Kind: repo.KindNPM, Path: "/r/pkgs/eslint@9.39.5/package", Err: fmt.Errorf("%w (%w)", install.ErrModified, install.ErrPlaceholder)},
		{Package: "go", Version: "1.19", Kind: repo.KindDeb, Path: "usr/bin/go", Err: install.ErrMissing},
	}
	v := VerifyOf(recs, nil, ps)
	if got, want := v.Problems[0].InRoot, into+"/lib/linter.js"; got != want {
		t.Errorf("in_root of eslint's file = %q, want %q", got, want)
	}
	var b strings.Builder
	want := "eslint 9.39.5: modified " + into + "/lib/linter.js (size)\n" +
		"eslint 9.39.5: modified /r/pkgs/eslint@9.39.5/package (placeholder of a folded directory)\n" +
		"go 1.19: missing usr/bin/go\n"
	if err := v.WriteText(&b); err != nil || b.String() != want {
		t.Errorf("WriteText:\n%s(%v), want\n%s", b.String(), err, want)
	}
	if v.Problems[1].InRoot != "" || v.Problems[2].InRoot != "usr/bin/go" {
		t.Errorf("in_root = %q, %q; want none for a placeholder, usr/bin/go", v.Problems[1].InRoot, v.Problems[2].InRoot)
	}
}

// TestProblemWords checks the words of each kind of finding, and of what more it says, as
// pkg verify prints them and its --json gives them.
func TestProblemWords(t *testing.T) {
	for _, tt := range []struct {
		err        error
		kind, what string
	}{
		{install.ErrExtra, "extra", ""},
		{fmt.Errorf("%w (%w)", install.ErrMissing, install.ErrPackageDir), "missing", "package directory"},
		{fmt.Errorf("%w (%w, %w, %w)", install.ErrModified, install.ErrMode, install.ErrSize, install.ErrContent), "modified", "mode, size, content"},
		{fmt.Errorf("%w (%w)", install.ErrModified, install.ErrType), "modified", "type"},
		{fmt.Errorf("%w (%w)", install.ErrModified, install.ErrLinkTarget), "modified", "symlink target"},
		{fmt.Errorf("%w (%w)", install.ErrMissing, install.ErrCommandLink), "missing", "command link"},
		{fmt.Errorf("%w (%w)", install.ErrUnreadable, fs.ErrPermission), "unreadable", "permission denied"},
		{fmt.Errorf("%w (%w)", install.ErrMissing, install.ErrDependency), "missing", "dependency"},
		{fmt.Errorf("%w (%w)", install.ErrExtra, install.ErrPlaceholder), "extra", "in the placeholder of a folded directory, whose files are at its prefix path"},
		{fmt.Errorf("%w (%w)", install.ErrCacheDamaged, install.ErrContent), "damaged", "content"},
	} {
		p := newVerify(1, 1, []install.FileError{{Package: "a", Version: "1", Path: "f", Err: tt.err}}).Problems[0]
		if p.Kind != tt.kind || p.What != tt.what {
			t.Errorf("%v: kind %q, what %q; want %q, %q", tt.err, p.Kind, p.What, tt.kind, tt.what)
		}
	}
}
