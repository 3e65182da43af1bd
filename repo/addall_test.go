package repo

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// inode returns the inode number of name: a file replaced by rename has another.
func inode(t *testing.T, name string) uint64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func TestAddAll(t *testing.T) {
	dir := t.TempDir()
	if _, err := addUnsigned(dir, writeArchive(t, "old-1.tar", "old"), Package{Name: "old", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	archives := []string{writeArchive(t, "a.tgz", "a"), writeArchive(t, "b.tgz", "b"), writeArchive(t, "c.tgz", "c")}
	archives[2] = writeArchive(t, "5f3a", "c") // as npm's cache names a file: the entry's Archive gives the ending
	pkgs := []Package{{Name: "b", Version: "2.0.0"}, {Name: "a", Version: "1.0.0", Depends: deps("b>=2")}, {Name: "b", Version: "1.0.0", Archive: "b-1.0.0.tgz"}}
	res, err := AddAll(context.Background(), dir, archives, pkgs, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Packages
	for i, want := range []string{"b-2.0.0.tgz", "a-1.0.0.tgz", "b-1.0.0.tgz"} {
		if got[i].Archive != want || got[i].SHA256 != sum(string("abc"[i])) || got[i].Size != 1 {
			t.Errorf("package %d: %+v, want archive %s of 1 byte", i, got[i], want)
		}
	}
	checkDir(t, dir, "index.json", "old-1.tar", "a-1.0.0.tgz", "b-1.0.0.tgz", "b-2.0.0.tgz")
	ix := readIndexFile(t, dir)
	if len(ix.Packages) != 4 || ix.Packages[1].Name != "b" || ix.Packages[1].Version != "1.0.0" {
		t.Errorf("index holds %+v, want old, a and both b, sorted", ix.Packages)
	}

	// A second run finds every entry and writes nothing.
	before := inode(t, filepath.Join(dir, "index.json"))
	res, err = AddAll(context.Background(), dir, archives, pkgs, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if inode(t, filepath.Join(dir, "index.json")) != before || res.Packages[0].Archive != "b-2.0.0.tgz" {
		t.Errorf("a second AddAll rewrote the index, or named %s", res.Packages[0].Archive)
	}

	// Other bytes for b 2.0.0 take the next name; the archive replaced is deleted.
	archives[0] = writeArchive(t, "b.tgz", "B")
	if res, err = AddAll(context.Background(), dir, archives, pkgs, true, nil); err != nil || res.Packages[0].Archive != "b-2.0.0-2.tgz" || !slices.Equal(res.Deleted, []string{"b-2.0.0.tgz"}) {
		t.Fatalf("AddAll of other bytes for b 2.0.0: %v, %+v", err, res)
	}
	checkDir(t, dir, "index.json", "old-1.tar", "a-1.0.0.tgz", "b-1.0.0.tgz", "b-2.0.0-2.tgz")
}

// TestAddAllRefuses: an AddAll that fails leaves the directory as it was, the archives it
// copied before the failure removed.
func TestAddAllRefuses(t *testing.T) {
	a, b := writeArchive(t, "a.tgz", "a"), writeArchive(t, "b.tgz", "b")
	missing := filepath.Join(t.TempDir(), "gone.tgz")
	tests := []struct {
		name     string
		archives []string
		pkgs     []Package
		is       error
	}{
		{"missing archive", []string{a, b, missing}, []Package{{Name: "a", Version: "1"}, {Name: "b", Version: "1"}, {Name: "c", Version: "1"}}, fs.ErrNotExist},
		{"twice", []string{a, b}, []Package{{Name: "a", Version: "1"}, {Name: "a", Version: "1"}}, nil},
		{"bad name", []string{a, b}, []Package{{Name: "a", Version: "1"}, {Name: "B", Version: "1"}}, nil},
		{"too large", []string{a, b}, []Package{{Name: "a", Version: "1"}, {Name: "b", Version: "1", Files: maxFiles + 1}}, ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := addUnsigned(dir, writeArchive(t, "old-1.tar", "old"), Package{Name: "old", Version: "1"}); err != nil {
				t.Fatal(err)
			}
			index, _ := os.ReadFile(filepath.Join(dir, "index.json"))
			_, err := AddAll(context.Background(), dir, tt.archives, tt.pkgs, false, nil)
			if err == nil || tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("AddAll: %v, want an error (%v)", err, tt.is)
			}
			checkDir(t, dir, "index.json", "old-1.tar")
			if now, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(now, index) {
				t.Errorf("index changed:\n%s", now)
			}
		})
	}
}

// TestAddAllSigned: a signed directory takes a signer, and is refused, nothing copied,
// without one.
func TestAddAllSigned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "main")
	s := testSigner("main", time.Now().Add(time.Hour))
	a := writeArchive(t, "a.tgz", "a")
	if res, err := AddAll(context.Background(), dir, []string{a}, []Package{{Name: "a", Version: "1"}}, false, s); err != nil || res.Meta.Version != 1 {
		t.Fatalf("AddAll signed: %+v, %v", res, err)
	}
	checkSigned(t, dir)
	var se *signedError
	_, err := AddAll(context.Background(), dir, []string{writeArchive(t, "b.tgz", "b")}, []Package{{Name: "b", Version: "1"}}, false, nil)
	if !errors.As(err, &se) {
		t.Fatalf("AddAll unsigned into a signed directory: %v", err)
	}
	checkDir(t, dir, "index.json", SignatureName, "a-1.tgz")
}

// TestAddAllURL records an entry whose Archive is an http(s) URL at that URL, hashing its
// download, beside one copied in, and gives the index as written and what each replaced.
func TestAddAllURL(t *testing.T) {
	dir := t.TempDir()
	const url = "https://upstream.example/releases/tool-1.0.tar.gz"
	archives := []string{writeArchive(t, "download", "the upstream bytes"), writeArchive(t, "lib.tgz", "lib")}
	pkgs := []Package{{Name: "tool", Version: "1.0", Archive: url, Depends: deps("lib")}, {Name: "lib", Version: "1"}}
	res, err := AddAll(t.Context(), dir, archives, pkgs, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Packages[0]; p.Archive != url || p.Size != int64(len("the upstream bytes")) || p.SHA256 != sum("the upstream bytes") {
		t.Errorf("tool: %+v, want the URL and its download's size and sha256", p)
	}
	checkDir(t, dir, "index.json", "lib-1.tgz")
	if len(res.Index) != 2 || len(res.Replaced) != 2 || res.Replaced[0] != nil {
		t.Errorf("index %+v, replaced %+v", res.Index, res.Replaced)
	}
	pkgs[1].Summary = "the library"
	if res, err = AddAll(t.Context(), dir, archives, pkgs, true, nil); err != nil || len(res.Replaced[1]) != 1 || res.Replaced[1][0].Summary != "" {
		t.Errorf("AddAll replacing lib: %+v, %v", res, err)
	}
}
