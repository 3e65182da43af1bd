package install

import (
	"errors"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"strings"
	"testing"

	"pkg/db"
	"pkg/repo"
)

// TestClashWording names the version to have where the command's provider is another
// version of the same npm name: "remove prettier@3.10.2 first to have prettier's" did not
// say which prettier.
func TestClashWording(t *testing.T) {
	for _, tt := range []struct {
		e    clashError
		want string
	}{
		{clashError{Package: "node20", Version: "20.1", Command: "node", Other: "node18"}, "(remove node18 first to have node20's)"},
		{clashError{Package: "prettier", Version: "3.3.3", Command: "prettier", Other: "prettier@3.10.2"}, "(remove prettier@3.10.2 first to have prettier 3.3.3's)"},
	} {
		if got := tt.e.Error(); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%+v: %q, want it to end %q", tt.e, got, tt.want)
		}
	}
}

// TestCheck refuses, before anything is staged, a change the commit would refuse: a command
// two packages provide, neither replacing the other (*clashError), a directory in pkgs/ or a command in bin/ that pkg did
// not make (*unmanagedError), a dependency broken, a lib package in a root whose path
// cannot be in LD_LIBRARY_PATH; and changes nothing.
func TestCheck(t *testing.T) {
	r := openRoot(t, t.TempDir())
	installed := []db.Record{{Name: "a", Version: "1", Bin: testrepo.Commands("bin/tool")}, {Name: "app", Version: "1", Depends: testrepo.Requires("a>=1")}}
	clash := repo.Package{Name: "b", Version: "1", Bin: testrepo.Commands("tool=bin/b")}
	var ce *clashError
	if err := CheckChange(r.Dir(), installed, []repo.Package{clash}, nil); !errors.As(err, &ce) || ce.Other != "a" || ce.Incoming {
		t.Errorf("CheckChange of a command installed = %v, want a *clashError naming a", err)
	}
	replacing := clash
	replacing.Replaces = testrepo.Requires("a<2")
	if err := CheckChange(r.Dir(), installed, []repo.Package{replacing}, nil); err != nil {
		t.Errorf("CheckChange of a command installed, by a package replacing its own: %v", err)
	}
	if err := CheckChange(r.Dir(), nil, []repo.Package{clash, {Name: "c", Version: "1", Bin: testrepo.Commands("tool=bin/c")}}, nil); !errors.As(err, &ce) || !ce.Incoming {
		t.Errorf("CheckChange of two packages with one command = %v, want a *clashError, incoming", err)
	}
	if err := CheckChange(r.Dir(), installed, nil, []string{"a"}); !errors.Is(err, ErrDependency) {
		t.Errorf("CheckChange of removing what app depends on = %v, want ErrDependency", err)
	}
	if err := CheckChange(r.Dir(), installed, []repo.Package{{Name: "a", Version: "0.9", Bin: testrepo.Commands("bin/tool")}}, nil); !errors.Is(err, ErrDependency) {
		t.Errorf("CheckChange of a version app does not allow = %v, want ErrDependency", err)
	}
	lib := repo.Package{Name: "l", Version: "1", Lib: []string{"lib"}}
	if err := CheckChange(filepath.Join(t.TempDir(), "a:b"), nil, []repo.Package{lib}, nil); err == nil {
		t.Errorf("CheckChange of a lib package into a root with ':': no error")
	}

	if err := os.Mkdir(filepath.Join(r.Dir(), "pkgs", "stray"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir(), "bin", "mine"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ue *unmanagedError
	if err := r.Check([]repo.Package{{Name: "stray", Version: "1"}}, nil); !errors.As(err, &ue) || ue.Command {
		t.Errorf("Check of a tree pkgs/ holds unrecorded = %v, want an *unmanagedError", err)
	}
	if err := r.Check([]repo.Package{{Name: "m", Version: "1", Bin: testrepo.Commands("mine=bin/m")}}, nil); !errors.As(err, &ue) || !ue.Command {
		t.Errorf("Check of a command bin/ holds that is not pkg's = %v, want an *unmanagedError of a command", err)
	}
	if err := r.Check([]repo.Package{{Name: "ok", Version: "1", Bin: testrepo.Commands("bin/ok")}}, nil); err != nil {
		t.Errorf("Check of a package nothing is in the way of: %v", err)
	}
}

// TestCheckSatisfaction: a dependency is met by any of its alternatives or by a package
// that provides it (repo.Requirement.Met); removing what meets it is refused only where
// nothing else does; an incoming package that conflicts with an installed one is refused.
func TestCheckSatisfaction(t *testing.T) {
	dir := t.TempDir()
	installed := []db.Record{
		{Name: "debconf", Version: "1.5"},
		{Name: "cdebconf", Version: "0.2", Provides: testrepo.Requires("debconf-2.0")},
		{Name: "zlib1g", Version: "1.2.13", Provides: testrepo.Requires("libz1=1.2.13")},
		{Name: "app", Version: "1", Depends: testrepo.Requires("debconf>=2|debconf-2.0", "libz1>=1.2")},
	}
	if err := CheckChange(dir, installed, []repo.Package{{Name: "tool", Version: "1", Depends: testrepo.Requires("nope|libz1")}}, nil); err != nil {
		t.Errorf("an alternative met by a provides: %v", err)
	}
	if err := CheckChange(dir, installed, nil, []string{"debconf"}); err != nil {
		t.Errorf("removing an alternative that meets nothing: %v", err)
	}
	if err := CheckChange(dir, installed, nil, []string{"cdebconf"}); !errors.Is(err, ErrDependency) {
		t.Errorf("removing the only provider of app's dependency = %v, want ErrDependency", err)
	}
	if err := CheckChange(dir, installed, nil, []string{"zlib1g"}); !errors.Is(err, ErrDependency) || !strings.Contains(err.Error(), "app 1 (for libz1>=1.2) depends on it") {
		t.Errorf("removing the versioned provider = %v, want ErrDependency naming the dependency it meets", err)
	}
	if err := CheckChange(dir, installed, []repo.Package{{Name: "zlib1", Version: "1", Conflicts: testrepo.Requires("zlib1g")}}, nil); !errors.Is(err, ErrDependency) {
		t.Errorf("installing a package that conflicts with an installed one = %v, want ErrDependency", err)
	}
	if err := CheckChange(dir, installed, []repo.Package{{Name: "libz-old", Version: "1", Conflicts: testrepo.Requires("libz1<1")}}, nil); err != nil {
		t.Errorf("a conflict with a version not installed: %v", err)
	}
	both := []repo.Package{{Name: "mta", Version: "1", Conflicts: testrepo.Requires("debconf", "cdebconf", "zlib1g")}}
	for range 20 { // of several conflicts, the first by name is named, every time
		if err := CheckChange(dir, installed, both, nil); err == nil || !strings.Contains(err.Error(), "install mta 1: it conflicts with cdebconf 0.2 (its conflicts list cdebconf)") {
			t.Fatalf("installing a package that conflicts with three installed = %v, want cdebconf named, and the entry", err)
		}
	}
	old := append(installed, db.Record{Name: "libxml2-old", Version: "1", Conflicts: testrepo.Requires("libxml2<2.7.6")})
	if err := CheckChange(dir, old, []repo.Package{{Name: "libxml2", Version: "2.7"}}, nil); err == nil || !strings.Contains(err.Error(), "install libxml2 2.7: libxml2-old 1 conflicts with it (its conflicts list libxml2<2.7.6)") {
		t.Errorf("installing a package an installed one conflicts with = %v, want the installed one and its entry named", err)
	}
}

// TestCheckInstances: the versions of an npm name are instances of their own: removing one
// that a package depends on (or has as a peer) is refused, removing another is not, and
// a dependency is met by whichever version its range allows.
func TestCheckInstances(t *testing.T) {
	npm := func(name, version string, depends, peers []string) db.Record {
		return db.Record{Name: name, Version: version, Kind: repo.KindNPM, Depends: testrepo.Requires(depends...), Peers: testrepo.Requires(peers...)}
	}
	installed := []db.Record{npm("a", "1.0.0", []string{"dep@npm:^1"}, nil), npm("b", "1.0.0", nil, []string{"dep@npm:^2"}),
		npm("dep", "1.0.0", nil, nil), npm("dep", "2.0.0", nil, nil)}
	for _, tt := range []struct {
		remove []string
		ok     bool
	}{
		{[]string{"dep@1.0.0"}, false},
		{[]string{"dep@2.0.0"}, false}, // b's peer
		{[]string{"dep@2.0.0", "b@1.0.0"}, true},
		{[]string{"dep@1.0.0", "dep@2.0.0", "a@1.0.0", "b@1.0.0"}, true},
	} {
		err := checkApply(installed, nil, tt.remove, npmless)
		if tt.ok && err != nil || !tt.ok && !errors.Is(err, ErrDependency) {
			t.Errorf("remove %q: %v", tt.remove, err)
		}
	}
	c := npm("c", "1.0.0", []string{"dep@npm:^3"}, nil)
	if err := checkApply(installed, []*db.Record{&c}, nil, npmless); !errors.Is(err, ErrDependency) {
		t.Errorf("install c, which needs dep 3: %v", err)
	}
	dep3 := npm("dep", "3.0.0", nil, nil)
	if err := checkApply(installed, []*db.Record{&c, &dep3}, nil, npmless); err != nil {
		t.Errorf("install c and dep 3 beside dep 1 and 2: %v", err)
	}
}
