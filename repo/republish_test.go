package repo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRepublish: Add, AddURL and AddAll refuse a version the index has with another
// archive or other metadata, unwrapped and writing nothing, unless told to replace it; the
// same entry added again is no republish.
func TestRepublish(t *testing.T) {
	const url = "https://upstream.example/a-1.tar"
	adds := map[string]func(dir, archive string, p Package, replace bool) error{
		"Add": func(dir, archive string, p Package, replace bool) error {
			_, err := Add(t.Context(), dir, archive, p, replace, nil)
			return err
		},
		"AddURL": func(dir, archive string, p Package, replace bool) error {
			_, err := AddURL(t.Context(), dir, url, archive, p, replace, nil)
			return err
		},
		"AddAll": func(dir, archive string, p Package, replace bool) error {
			_, err := AddAll(t.Context(), dir, []string{archive}, []Package{p}, replace, nil)
			return err
		},
	}
	for name, add := range adds {
		t.Run(name, func(t *testing.T) {
			first, other := writeArchive(t, "a-1.tar", "first"), writeArchive(t, "a-1.tar", "other")
			for _, tt := range []struct {
				name    string
				archive string
				summary string
			}{
				{"another archive", other, ""},
				{"other metadata", first, "another summary"},
			} {
				dir := t.TempDir()
				if err := add(dir, first, Package{Name: "a", Version: "1"}, false); err != nil {
					t.Fatal(err)
				}
				index, _ := os.ReadFile(filepath.Join(dir, indexName))
				files, _ := os.ReadDir(dir)
				err := add(dir, tt.archive, Package{Name: "a", Version: "1", Summary: tt.summary}, false)
				var re *RepublishError
				if !errors.As(err, &re) || re.Dir != dir || re.Had.SHA256 != sum("first") || err != error(re) {
					t.Errorf("%s: %v, want a RepublishError of the entry the index has, unwrapped", tt.name, err)
				}
				now, _ := os.ReadFile(filepath.Join(dir, indexName))
				if nowFiles, _ := os.ReadDir(dir); !bytes.Equal(now, index) || len(nowFiles) != len(files) {
					t.Errorf("%s: the refused add changed the repository", tt.name)
				}
				if err := add(dir, first, Package{Name: "a", Version: "1"}, false); err != nil {
					t.Errorf("%s: the same entry added again: %v", tt.name, err)
				}
				if err := add(dir, tt.archive, Package{Name: "a", Version: "1", Summary: tt.summary}, true); err != nil {
					t.Errorf("%s: replacing: %v", tt.name, err)
				}
			}
		})
	}
}
