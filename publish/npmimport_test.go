package publish

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"pkg/repo"
)

// tgz returns the bytes of an npm tarball whose package.json is manifest.
func tgz(t *testing.T, manifest string) string {
	data, err := os.ReadFile(npmTarball(t, manifest).Path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writeLock writes a package-lock.json whose project depends on a, with the entries given.
func writeLock(t *testing.T, entries map[string]map[string]any) string {
	path := filepath.Join(t.TempDir(), "package-lock.json")
	if err := os.WriteFile(path, lockJSON(t, map[string]any{"dependencies": map[string]string{"a": "^1"}}, entries), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportNPMLock(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := tgz(t, `{"name": "a", "version": "1.0.0", "dependencies": {"@s/b": "^2.0.0"}}`)
	b := tgz(t, `{"name": "@s/b", "version": "2.1.0", "scripts": {"postinstall": "node build.js"}}`)
	srv, gets := registry(t, map[string]string{"a.tgz": a, "b.tgz": b})
	lock := writeLock(t, map[string]map[string]any{
		"node_modules/a":    {"version": "1.0.0", "resolved": srv.URL + "/a.tgz", "integrity": integrity(a)},
		"node_modules/@s/b": {"version": "2.1.0", "resolved": srv.URL + "/b.tgz", "integrity": integrity(b)},
	})
	dir := filepath.Join(t.TempDir(), "repo")
	res, err := ImportNPMLock(t.Context(), dir, lock, NPMImport{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.New) != 2 || res.New[0].Archive != "@s+b-2.1.0.tgz" || res.New[1].Archive != "a-1.0.0.tgz" || res.Downloaded != 2 || !res.Created {
		t.Errorf("imported %+v, want both added as .tgz, downloaded, into a new repository", res)
	}
	if got := res.Scripts["@s/b@2.1.0"]; len(got) != 1 || got[0] != "postinstall" {
		t.Errorf("@s/b's scripts %q, want its postinstall", got)
	}
	if len(res.Lock.Packages) != 2 || res.Lock.Requires[0].String() != "a@npm:1.0.0" {
		t.Errorf("lock %+v", res.Lock)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	res, err = ImportNPMLock(t.Context(), dir, lock, NPMImport{Offline: true})
	if now, _ := os.ReadFile(filepath.Join(dir, "index.json")); err != nil || len(res.New) != 0 || res.Downloaded != 0 || !bytes.Equal(now, index) || gets.Load() != 2 {
		t.Errorf("a second import, offline: %v, %d new, index changed %v, %d GETs in all", err, len(res.New), !bytes.Equal(now, index), gets.Load())
	}

	// a 1.0.0 packed again, other bytes: refused as a republish, unless Replace.
	a2 := tgz(t, `{"name": "a", "version": "1.0.0", "description": "again", "dependencies": {"@s/b": "^2.0.0"}}`)
	srv2, _ := registry(t, map[string]string{"a.tgz": a2, "b.tgz": b})
	lock = writeLock(t, map[string]map[string]any{
		"node_modules/a":    {"version": "1.0.0", "resolved": srv2.URL + "/a.tgz", "integrity": integrity(a2)},
		"node_modules/@s/b": {"version": "2.1.0", "resolved": srv2.URL + "/b.tgz", "integrity": integrity(b)},
	})
	var re *repo.RepublishError
	if _, err := ImportNPMLock(t.Context(), dir, lock, NPMImport{}); !errors.As(err, &re) || re.Had.Name != "a" {
		t.Errorf("an import of another a 1.0.0: %v, want a RepublishError", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(now, index) {
		t.Errorf("a refused import changed the index")
	}
	res, err = ImportNPMLock(t.Context(), dir, lock, NPMImport{Replace: true})
	if err != nil || len(res.New) != 1 || res.New[0].Name != "a" || res.New[0].Summary != "again" {
		t.Errorf("the import with Replace: %v, new %+v", err, res.New)
	}
}

// TestImportNPMLockRefuses: a tarball that is not the package its lock says is refused,
// naming it, and the repository is as it was.
func TestImportNPMLockRefuses(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := tgz(t, `{"name": "a", "version": "1.0.0"}`)
	other := tgz(t, `{"name": "a", "version": "1.0.1"}`)
	plain := testTar(t)
	srv, _ := registry(t, map[string]string{"a.tgz": a, "other.tgz": other, "plain.tar": plain})
	for _, tt := range []struct {
		name string
		url  string
		data string
		is   error
	}{
		{"another version", "/other.tgz", other, errNamed},
		{"not npm", "/plain.tar", plain, errNotNPM},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lock := writeLock(t, map[string]map[string]any{
				"node_modules/a": {"version": "1.0.0", "resolved": srv.URL + "/a.tgz", "integrity": integrity(a)},
				"node_modules/x": {"version": "1.0.0", "resolved": srv.URL + tt.url, "integrity": integrity(tt.data)},
			})
			dir := t.TempDir()
			_, err := ImportNPMLock(t.Context(), dir, lock, NPMImport{})
			var le *NPMLockError
			if !errors.Is(err, tt.is) || !errors.As(err, &le) || le.Key != "node_modules/x" || le.Path != lock {
				t.Errorf("ImportNPMLock: %v, want %v naming node_modules/x", err, tt.is)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the repository holds %d files", len(entries))
			}
		})
	}
}

// testTar returns a plain tar of one file, not an npm tarball.
func testTar(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "x.tar")
	writeTar(t, path, "bin/x")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestImportNPMLockResolvedQuery: a resolved URL with a query or a fragment names the
// archive by its path's ending alone, as a registry that signs its URLs gives them.
func TestImportNPMLockResolvedQuery(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := tgz(t, `{"name": "a", "version": "1.0.0"}`)
	srv, _ := registry(t, map[string]string{"a.tgz": a})
	for _, u := range []string{"/a.tgz?token=abc", "/a.tgz#frag"} {
		lock := writeLock(t, map[string]map[string]any{
			"node_modules/a": {"version": "1.0.0", "resolved": srv.URL + u, "integrity": integrity(a)},
		})
		res, err := ImportNPMLock(t.Context(), filepath.Join(t.TempDir(), "repo"), lock, NPMImport{})
		if err != nil || len(res.New) != 1 || res.New[0].Archive != "a-1.0.0.tgz" {
			t.Errorf("resolved %s: %v, want a-1.0.0.tgz added", u, err)
		}
	}
}

// TestImportNPMLockManifestNamesURL: a downloaded tarball's package.json that pkg refuses
// is named by the URL it came from, not the temporary file it was read from.
func TestImportNPMLockManifestNamesURL(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := tgz(t, `{"name": "a", "version": "1.0.0", "dependencies": {"b": "latest"}}`)
	srv, _ := registry(t, map[string]string{"a.tgz": a})
	lock := writeLock(t, map[string]map[string]any{
		"node_modules/a": {"version": "1.0.0", "resolved": srv.URL + "/a.tgz", "integrity": integrity(a)},
	})
	_, err := ImportNPMLock(t.Context(), filepath.Join(t.TempDir(), "repo"), lock, NPMImport{})
	var me *ManifestError
	if !errors.As(err, &me) || me.Archive != srv.URL+"/a.tgz" || me.Field != "dependencies" {
		t.Errorf("ImportNPMLock: %v, want a *ManifestError naming %s/a.tgz and dependencies", err, srv.URL)
	}
}

// TestImportNPMLockAbsentBin imports a lock one of whose packages names in its
// package.json a command file its tarball lacks: it is added without that command, which
// Imported.Absent names, so the lock is imported whole.
func TestImportNPMLockAbsentBin(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := tgz(t, `{"name": "a", "version": "1.0.0", "bin": "gone.js"}`)
	srv, _ := registry(t, map[string]string{"a.tgz": a})
	lock := writeLock(t, map[string]map[string]any{
		"node_modules/a": {"version": "1.0.0", "resolved": srv.URL + "/a.tgz", "integrity": integrity(a)},
	})
	res, err := ImportNPMLock(t.Context(), filepath.Join(t.TempDir(), "repo"), lock, NPMImport{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.New) != 1 || len(res.New[0].Bin) != 0 {
		t.Errorf("imported %+v, want a without commands", res.New)
	}
	if got := res.Absent["a@1.0.0"]; len(got) != 1 || got[0].Path != "package/gone.js" {
		t.Errorf("a's absent commands %q, want package/gone.js", got)
	}
}

// TestImportNPMLockRace: an import that takes the repository's lock after an add of
// another a 1.0.0 is refused as a republish, naming the lock's package, and leaves the
// repository as that add wrote it.
func TestImportNPMLockRace(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := tgz(t, `{"name": "a", "version": "1.0.0"}`)
	srv, _ := registry(t, map[string]string{"a.tgz": a})
	lock := writeLock(t, map[string]map[string]any{
		"node_modules/a": {"version": "1.0.0", "resolved": srv.URL + "/a.tgz", "integrity": integrity(a)},
	})
	dir := t.TempDir()
	var index []byte
	raceAdd(t, func() {
		other := npmTarball(t, `{"name": "a", "version": "1.0.0", "description": "another build"}`)
		if _, err := Add(t.Context(), dir, other, repo.Package{Name: "a", Version: "1.0.0", Kind: repo.KindNPM}, false, nil); err != nil {
			t.Errorf("the add that takes the lock first: %v", err)
		}
		index, _ = os.ReadFile(filepath.Join(dir, "index.json"))
	})
	_, err := ImportNPMLock(t.Context(), dir, lock, NPMImport{})
	var re *repo.RepublishError
	var le *NPMLockError
	if !errors.As(err, &re) || !errors.As(err, &le) || le.Key != "node_modules/a" {
		t.Errorf("the import that takes the lock second: %v, want a RepublishError of node_modules/a", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "index.json")); !bytes.Equal(now, index) {
		t.Errorf("the refused import changed the index")
	}
}
