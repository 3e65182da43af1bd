package publish

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"reflect"
	"testing"

	"pkg/fetch"
	"pkg/repo"
)

// writeTar writes a tar of the files, name to contents, each executable, at path.
func writeTar(t *testing.T, path string, files ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for _, name := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: 2, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte("x\n")); err != nil {
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

	p.Summary = "other"
	if _, err := Add(t.Context(), dir, a, p, false, nil); err == nil {
		t.Error("Add of the same version with other metadata: no error")
	}
	res, err = Add(t.Context(), dir, a, p, true, nil)
	if err != nil || res.Created || len(res.Replaced) != 1 {
		t.Errorf("Add replacing: %+v, %v; want the old entry replaced", res, err)
	}
}

// TestEntry: a .deb's control file names the entry where the flags do not, and gives its
// summary unless one was given; an archive without one leaves the entry as given.
func TestEntry(t *testing.T) {
	deb := &Archive{}
	deb.Control = &fetch.Control{Package: "hello", Version: "2.10-1", Description: "says hello", Depends: "libc6"}
	for _, tt := range []struct {
		a           *Archive
		p           repo.Package
		keepSummary bool
		want        repo.Package
	}{
		{deb, repo.Package{}, false, repo.Package{Name: "hello", Version: "2.10-1", Summary: "says hello"}},
		{deb, repo.Package{Name: "hi", Summary: "mine"}, false, repo.Package{Name: "hi", Version: "2.10-1", Summary: "says hello"}},
		{deb, repo.Package{Version: "3", Summary: ""}, true, repo.Package{Name: "hello", Version: "3"}},
		{&Archive{}, repo.Package{Name: "t"}, false, repo.Package{Name: "t"}},
	} {
		if got := tt.a.Entry(tt.p, tt.keepSummary); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Entry(%+v, %v) = %+v, want %+v", tt.p, tt.keepSummary, got, tt.want)
		}
	}
}
