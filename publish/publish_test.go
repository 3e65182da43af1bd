package publish

import (
	"archive/tar"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/tarutil"
)

// writeTar writes a tar of the files, each executable and holding "x\n", at path.
func writeTar(t *testing.T, path string, files ...string) {
	t.Helper()
	contents := make([]string, 2*len(files))
	for i, name := range files {
		contents[2*i], contents[2*i+1] = name, "x\n"
	}
	writeTarOf(t, path, contents...)
}

// writeTarOf writes a tar at path of the files given as name, contents, ..., each executable.
func writeTarOf(t *testing.T, path string, files ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for i := 0; i < len(files); i += 2 {
		name, data := files[i], files[i+1]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAdd(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	archive := filepath.Join(src, "a-1.tar")
	writeTar(t, archive, "bin/a", "usr/lib/liba.so.1")
	a, err := Open(context.Background(), archive)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	if _, err := Add(t.Context(), dir, a, repo.Package{Name: "a", Version: "1", Bin: testrepo.Commands("bin/missing")}, false, nil); err == nil {
		t.Error("Add with a command not in the archive: no error")
	}
	if _, err := Add(t.Context(), dir, a, repo.Package{Name: "a", Version: "1", Lib: []string{"lib"}}, false, nil); err == nil {
		t.Error("Add with a library directory not in the archive: no error")
	}
	p := repo.Package{Name: "a", Version: "1", Bin: testrepo.Commands("./bin/a"), Depends: testrepo.Requires("b>=2")}
	res, err := Add(t.Context(), dir, a, p, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Package.Files != 2 || !reflect.DeepEqual(res.Package.Bin, testrepo.Commands("bin/a")) {
		t.Errorf("Add = %+v, want a new repository's entry of 2 files, its bin cleaned", res)
	}
	if !reflect.DeepEqual(res.Missing, testrepo.Requires("b>=2")) || !reflect.DeepEqual(res.LibDirs, []string{"usr/lib"}) || res.Replaced != nil {
		t.Errorf("Add: missing %q, lib dirs %q, replaced %v; want b>=2, usr/lib, none", res.Missing, res.LibDirs, res.Replaced)
	}

	if res.Again {
		t.Error("Add of a new entry: Again, want false")
	}
	if res, err := Add(t.Context(), dir, a, p, false, nil); err != nil || res.Replaced != nil || !res.Again {
		t.Errorf("Add of the same entry again: replaced %v, again %v, %v; want nothing replaced, again", res.Replaced, res.Again, err)
	}
	p.Summary = "other"
	if _, err := Add(t.Context(), dir, a, p, false, nil); err == nil {
		t.Error("Add of the same version with other metadata: no error")
	}
	res, err = Add(t.Context(), dir, a, p, true, nil)
	if err != nil || res.Created || len(res.Replaced) != 1 || res.Again {
		t.Errorf("Add replacing: %+v, %v; want the old entry replaced", res, err)
	}
}

// TestAddDeleted: Add says it deleted the archive of the entry it replaced only where
// repo.Add did: not one deleted by hand before, nor the index's signature that an index
// written by hand names, which a repository directory never deletes.
func TestAddDeleted(t *testing.T) {
	src := t.TempDir()
	one, two := filepath.Join(src, "one.tar"), filepath.Join(src, "two.tar")
	writeTarOf(t, one, "bin/a", "one")
	writeTarOf(t, two, "bin/a", "two")
	add := func(dir, path string, replace bool) *Added {
		t.Helper()
		a, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		res, err := Add(t.Context(), dir, a, repo.Package{Name: "a", Version: "1"}, replace, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name    string
		before  func(dir string) error
		deleted []string
	}{
		{"replaced", func(string) error { return nil }, []string{"a-1.tar"}},
		{"deleted by hand", func(dir string) error { return os.Remove(filepath.Join(dir, "a-1.tar")) }, nil},
		{"the signature", func(dir string) error {
			index := filepath.Join(dir, "index.json")
			data, err := os.ReadFile(index)
			if err == nil {
				err = os.WriteFile(index, []byte(strings.Replace(string(data), `"a-1.tar"`, `"index.json.sig"`, 1)), 0o644)
			}
			return err
		}, nil},
	} {
		dir := t.TempDir()
		add(dir, one, false)
		if err := tc.before(dir); err != nil {
			t.Fatal(err)
		}
		res := add(dir, two, true)
		if len(res.Replaced) != 1 || !slices.Equal(res.Deleted, tc.deleted) {
			t.Errorf("%s: Add replacing: replaced %d, deleted %q; want 1, %q", tc.name, len(res.Replaced), res.Deleted, tc.deleted)
		}
	}
}

// TestEntry: a .deb's entry is of kind deb; its control file and tree give it every part its flags do not
// (a nil list), its summary unless one was given; a relation pkg cannot represent is
// refused unless its flag replaces it; an npm layout whose package.json has no name gets
// its Into; another archive is left as given.
func TestEntry(t *testing.T) {
	deb := &Archive{}
	deb.Control = &fetch.Control{Package: "hello", Version: "2.10-1", Architecture: "amd64", Description: "says hello", Relations: map[string]string{
		"Depends": "libc6 (>= 2.34), libgreet1 | libgreet2", "Pre-Depends": "dpkg (>= 1.15)", "Provides": "greeter (= 2)",
		"Conflicts": "hello-old", "Breaks": "hello-doc (<< 2.10)", "Replaces": "hello-old"}}
	deb.Members = []tarutil.Member{
		{Name: "usr", Type: tar.TypeDir}, {Name: "usr/bin", Type: tar.TypeDir},
		{Name: "usr/bin/hello", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/lib/x86_64-linux-gnu/libgreet.so.1", Type: tar.TypeReg, Mode: 0o644},
	}
	full := repo.Package{Name: "hello", Version: "2.10-1", Kind: repo.KindDeb, Summary: "says hello", Platform: "linux-amd64",
		Depends:   testrepo.Requires("libc6>=2.34", "libgreet1|libgreet2", "dpkg>=1.15"),
		Provides:  testrepo.Requires("greeter=2"),
		Conflicts: testrepo.Requires("hello-old", "hello-doc<2.10"),
		Replaces:  testrepo.Requires("hello-old"),
		Bin:       testrepo.Commands("usr/bin/hello"), Lib: []string{"usr/lib/x86_64-linux-gnu"}}
	flagged := func(p repo.Package) repo.Package {
		p.Depends, p.Provides, p.Conflicts, p.Replaces = testrepo.Requires("a"), testrepo.Requires("b"), testrepo.Requires("c"), testrepo.Requires("d")
		p.Bin, p.Lib = testrepo.Commands("usr/bin/x"), []string{"lib"}
		return p
	}
	all := &Archive{} // Architecture all: for any platform
	all.Control = &fetch.Control{Package: "doc", Version: "1", Architecture: "all"}
	npm := &Archive{Path: filepath.Join(t.TempDir(), "prettier.tar")} // a package.json without a name: not kind npm
	writeTarOf(t, npm.Path, "package/package.json", "{}\n")
	npm.Members = []tarutil.Member{{Name: "package", Type: tar.TypeDir}, {Name: "package/package.json", Type: tar.TypeReg}}
	into := repo.Package{Name: "prettier", Version: "3", Into: "lib/node_modules/prettier"}
	notNPM := &Archive{}
	notNPM.Members = append(slices.Clone(npm.Members), tarutil.Member{Name: "README", Type: tar.TypeReg})
	for _, tt := range []struct {
		a           *Archive
		p           repo.Package
		keepSummary bool
		want        repo.Package
	}{
		{deb, repo.Package{}, false, full},
		{deb, repo.Package{Name: "hi", Summary: "mine"}, false, func() repo.Package { p := full; p.Name = "hi"; return p }()},
		{deb, repo.Package{Version: "3", Summary: ""}, true, func() repo.Package { p := full; p.Version, p.Summary = "3", ""; return p }()},
		{deb, flagged(repo.Package{}), false, flagged(repo.Package{Name: "hello", Version: "2.10-1", Kind: repo.KindDeb, Summary: "says hello", Platform: "linux-amd64"})},
		{deb, repo.Package{Platform: "linux-arm64"}, false, func() repo.Package { p := full; p.Platform = "linux-arm64"; return p }()},
		{all, repo.Package{}, false, repo.Package{Name: "doc", Version: "1", Kind: repo.KindDeb}},
		{&Archive{}, repo.Package{Name: "t"}, false, repo.Package{Name: "t"}},
		{npm, repo.Package{Name: "prettier", Version: "3"}, false, into},
		{npm, repo.Package{Name: "prettier", Version: "3", Into: "lib/x"}, false, repo.Package{Name: "prettier", Version: "3", Into: "lib/x"}},
		{notNPM, repo.Package{Name: "prettier", Version: "3"}, false, repo.Package{Name: "prettier", Version: "3"}},
	} {
		got, err := tt.a.Entry(tt.p, tt.keepSummary)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Entry(%+v, %v):\ngot  %+v, %v\nwant %+v", tt.p, tt.keepSummary, got, err, tt.want)
		}
	}

	x32 := &Archive{} // an architecture Go has no name for: refused, unless its platform is given
	x32.Control = &fetch.Control{Package: "hello", Version: "1", Architecture: "x32"}
	var ae *ArchError
	if _, err := x32.Entry(repo.Package{}, false); !errors.As(err, &ae) || ae.Arch != "x32" || ae.Name != "hello" {
		t.Errorf("Entry of a .deb for x32: %v, want an *ArchError naming hello and x32", err)
	}
	if p, err := x32.Entry(repo.Package{Platform: "linux-amd64"}, false); err != nil || p.Platform != "linux-amd64" {
		t.Errorf("Entry of that .deb with a platform given: %+v, %v", p, err)
	}

	bad := &Archive{}
	bad.Control = &fetch.Control{Package: "hello", Version: "1", Architecture: "amd64", Relations: map[string]string{"Depends": "libc6:i386"}}
	var ce *fetch.ControlError
	if _, err := bad.Entry(repo.Package{}, false); !errors.As(err, &ce) || ce.Field != "Depends" || ce.Relation != "libc6:i386" {
		t.Errorf("Entry of a .deb depending on libc6:i386: %v, want a *fetch.ControlError of its Depends", err)
	}
	if p, err := bad.Entry(repo.Package{Depends: testrepo.Requires("libc6")}, false); err != nil || repo.JoinRequirements(p.Depends) != "libc6" {
		t.Errorf("Entry of that .deb with its depends given: %+v, %v", p, err)
	}
	bad.Control.Version = "1:x"
	if _, err := bad.Entry(repo.Package{}, false); !errors.As(err, &ce) || ce.Field != "Version" {
		t.Errorf("Entry of a .deb of version 1:x: %v, want a *fetch.ControlError of its Version", err)
	}
	bad.Control.Package, bad.Control.Relations = "Hello", nil
	if p, err := bad.Entry(repo.Package{Name: "hello", Version: "1"}, false); err != nil || p.Name != "hello" {
		t.Errorf("Entry of a .deb named Hello, of version 1:x, with a name and version given: %+v, %v", p, err)
	}
}

// TestDebCommands: a .deb's commands are the executables directly in usr/bin, bin,
// usr/sbin and sbin, links to one inside the package included, one per name.
func TestDebCommands(t *testing.T) {
	members := []tarutil.Member{
		{Name: "usr/bin/a", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/bin/data", Type: tar.TypeReg, Mode: 0o644},
		{Name: "usr/bin/.hidden", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/bin/owner-only", Type: tar.TypeReg, Mode: 0o700},
		{Name: "usr/bin/b", Type: tar.TypeSymlink, Linkname: "../lib/b/run"},
		{Name: "usr/lib/b/run", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/bin/c", Type: tar.TypeSymlink, Linkname: "data"},
		{Name: "usr/bin/d", Type: tar.TypeSymlink, Linkname: "python3.11"}, // another package's
		{Name: "usr/bin/e", Type: tar.TypeSymlink, Linkname: "e2"},
		{Name: "usr/bin/e2", Type: tar.TypeSymlink, Linkname: "e"},
		{Name: "usr/bin/sub", Type: tar.TypeDir, Mode: 0o755},
		{Name: "usr/bin/sub/f", Type: tar.TypeReg, Mode: 0o755},
		{Name: "bin/a", Type: tar.TypeReg, Mode: 0o755},
		{Name: "bin/g", Type: tar.TypeLink, Linkname: "usr/bin/a"},
		{Name: "sbin/h", Type: tar.TypeSymlink, Linkname: "../usr/bin/b"},
		{Name: "usr/sbin/i", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/local/bin/j", Type: tar.TypeReg, Mode: 0o755},
		{Name: "usr/lib/k/bin/k", Type: tar.TypeReg, Mode: 0o755},
	}
	want := testrepo.Commands("usr/bin/a", "usr/bin/owner-only", "usr/bin/b", "bin/g", "sbin/h", "usr/sbin/i")
	if got := debCommands(members, false); !slices.Equal(got, want) {
		t.Errorf("debCommands = %q, want %q", got, want)
	}
	// With dependencies, the link to a file another package holds is a command too.
	want = testrepo.Commands("usr/bin/a", "usr/bin/owner-only", "usr/bin/b", "usr/bin/d", "bin/g", "sbin/h", "usr/sbin/i")
	if got := debCommands(members, true); !slices.Equal(got, want) {
		t.Errorf("debCommands of a package with dependencies = %q, want %q", got, want)
	}
}

// TestAddReserved: repo add and a local install refuse, naming the member, an archive no
// install would place: one with a member in .pkg/ or pkgs/ (the first is the directory
// above it), or a top-level bin that is not a directory; the repository is left without
// an index.
func TestAddReserved(t *testing.T) {
	for _, member := range []string{".pkg/db", "pkgs/a/x", "bin"} {
		top, _, _ := strings.Cut(member, "/")
		dir, src := t.TempDir(), t.TempDir()
		archive := filepath.Join(src, "a-1.tar")
		writeTar(t, archive, "share/a", member)
		a, err := Open(context.Background(), archive)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		_, err = Add(t.Context(), dir, a, repo.Package{Name: "a", Version: "1"}, false, nil)
		if !errors.Is(err, install.ErrReserved) || !strings.Contains(err.Error(), `member "`+top+`"`) {
			t.Errorf("Add of an archive with %s: %v, want install.ErrReserved naming the member", member, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "index.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Add of an archive with %s wrote an index (%v)", member, err)
		}
		if _, err := a.Local(repo.Package{}); !errors.Is(err, install.ErrReserved) {
			t.Errorf("Local of an archive with %s: %v, want install.ErrReserved", member, err)
		}
	}
}

// TestAddURLCredentials: the user information of an archive's URL authenticates its
// download alone: the archive's Location, the entry and every file of the repository hold
// the URL without it, and a download the server refuses names the URL without it and says
// that its credential was refused.
func TestAddURLCredentials(t *testing.T) {
	src := t.TempDir()
	writeTar(t, filepath.Join(src, "tool-1.0.tar"), "bin/tool")
	files := http.FileServer(http.Dir(src))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "alice" || pass != "s3cretPW" {
			http.Error(w, "credentials, please", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	plain := srv.URL + "/tool-1.0.tar"
	a, err := Open(t.Context(), strings.Replace(plain, "://", "://alice:s3cretPW@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Location != plain {
		t.Errorf("Location %q, want %q", a.Location, plain)
	}
	dir := t.TempDir()
	res, err := Add(t.Context(), dir, a, repo.Package{Name: "tool", Version: "1.0"}, false, nil)
	if err != nil || res.Package.Archive != plain {
		t.Fatalf("Add: %+v, %v; want the entry's archive %s", res, err, plain)
	}
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if strings.Contains(string(data), "alice") || strings.Contains(string(data), "s3cretPW") {
			t.Errorf("%s holds the URL's user information", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	_, err = Open(t.Context(), strings.Replace(plain, "://", "://alice:wrongPW@", 1))
	de, fde := (*DownloadError)(nil), (*fetch.DeniedError)(nil)
	if !errors.As(err, &de) || !errors.As(err, &fde) || !fde.URL || de.URL != plain || strings.Contains(err.Error(), "alice") || strings.Contains(err.Error(), "wrongPW") {
		t.Errorf("a refused download: %v, want a *DownloadError of a *fetch.DeniedError of the URL's credential, naming %s alone", err, plain)
	}
}

// raceAdd sets testHookBeforeAdd to run add once, as another publisher's would between
// an add's reading of its archives and its lock of the repository.
func raceAdd(t *testing.T, add func()) {
	t.Cleanup(func() { testHookBeforeAdd = nil })
	testHookBeforeAdd = func() {
		testHookBeforeAdd = nil
		add()
	}
}

// TestAddRace: of two adds of one version at once, with other archives or other
// metadata, the one that takes the repository's lock second is refused as a republish
// and leaves the repository as the first wrote it.
func TestAddRace(t *testing.T) {
	src := t.TempDir()
	first, other := filepath.Join(src, "first.tar"), filepath.Join(src, "other.tar")
	writeTarOf(t, first, "bin/a", "first\n")
	writeTarOf(t, other, "bin/a", "other\n")
	for _, tt := range []struct {
		name    string
		archive string
		summary string
	}{
		{"another archive", other, ""},
		{"other metadata", first, "another summary"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := openArchive(t, tt.archive), openArchive(t, first)
			var won *Added
			raceAdd(t, func() {
				var err error
				if won, err = Add(t.Context(), dir, b, repo.Package{Name: "a", Version: "1"}, false, nil); err != nil {
					t.Errorf("the add that takes the lock first: %v", err)
				}
			})
			_, err := Add(t.Context(), dir, a, repo.Package{Name: "a", Version: "1", Summary: tt.summary}, false, nil)
			if won == nil { // the first add failed, said above
				t.FailNow()
			}
			if re := (*repo.RepublishError)(nil); !errors.As(err, &re) || re.Had.SHA256 != won.Package.SHA256 {
				t.Fatalf("the add that takes the lock second: %v, want a RepublishError naming the first's entry", err)
			}
			ix := repo.ReadDir(dir)
			if len(ix.Packages) != 1 || ix.Packages[0].SHA256 != won.Package.SHA256 || ix.Packages[0].Summary != "" {
				t.Errorf("the index holds %+v, want the first add's entry", ix.Packages)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 {
				t.Errorf("the repository holds %d files, want the index and the first's archive", len(entries))
			}
		})
	}
}

// openArchive opens the archive at path, closed when t ends.
func openArchive(t *testing.T, path string) *Archive {
	t.Helper()
	a, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}
