package repo

import (
	"fmt"
	"path/filepath"
	"slices"

	"pkg/internal/regfile"
)

// ReadDir returns the index of the repository directory dir, or an empty one if it cannot
// be read: what an addition to dir builds on.
func ReadDir(dir string) *Index {
	data, err := regfile.ReadFile(filepath.Join(dir, "index.json"), MaxIndexSize)
	if err != nil {
		return &Index{}
	}
	if ix, err := Parse(data); err == nil {
		return ix
	}
	return &Index{}
}

// RepublishError refuses to publish again a version a repository has, with another archive
// or other metadata: users who installed it would hold something the index no longer
// describes. Add, AddURL and AddAll return it unwrapped.
type RepublishError struct {
	Dir string
	Had Package // the entry the repository has
}

func (e *RepublishError) Error() string {
	return fmt.Sprintf("%s already has %s %s (archive %s, sha256 %s), which this would change under the users who installed it: publish a new version",
		e.Dir, e.Had.Name, e.Had.Version, e.Had.Archive, e.Had.SHA256)
}

// checkRepublish returns a *RepublishError when ix, the index of the repository dir read
// under its lock, has p's name, version and platform with another archive than the file
// archive, or other metadata.
func checkRepublish(dir, archive string, ix *Index, p Package) error {
	i := slices.IndexFunc(ix.Packages, p.SameKey)
	if i < 0 {
		return nil
	}
	q := ix.Packages[i]
	_, sum, err := HashFile(archive)
	if err != nil {
		return err
	}
	if sum == q.SHA256 && q.Summary == p.Summary && q.SameEntry(p) {
		return nil
	}
	return &RepublishError{Dir: dir, Had: q}
}
