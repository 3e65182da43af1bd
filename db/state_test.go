package db

import (
	"path/filepath"
	"testing"
)

// TestState reads the installed packages and the requirements of those asked for.
func TestState(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "db"))
	var ps []*Record
	var files []*FileList
	for _, name := range []string{"hello", "lib"} {
		ps = append(ps, &Record{Name: name, Version: "1.0", Files: 1})
		files = append(files, writeFiles(t, d, []File{{Path: name + "/f", Type: '0', Mode: 0o644}}))
	}
	if err := d.Commit(ps, files, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Request(parsed(t, map[string]string{"hello": "hello>=1"})); err != nil {
		t.Fatal(err)
	}
	recs, requested, err := d.State()
	if err != nil || len(recs) != 2 || len(requested) != 1 || requested["hello"].String() != "hello>=1" {
		t.Errorf("State = %v, %v, %v; want hello and lib, hello>=1 requested", recs, requested, err)
	}
	if r, ok := Find(recs, "lib"); !ok || r.Name != "lib" {
		t.Errorf("Find(lib) = %v, %v", r, ok)
	}
	if _, ok := Find(recs, "nope"); ok {
		t.Errorf("Find(nope) found it")
	}
	if pkgs := Packages(recs); len(pkgs) != 2 || pkgs[0].Name != recs[0].Name || pkgs[0].Version != "1.0" {
		t.Errorf("Packages = %+v", pkgs)
	}
}
