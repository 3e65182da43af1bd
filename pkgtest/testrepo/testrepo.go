// Package testrepo publishes small packages into repository directories for tests.
package testrepo

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"time"

	"pkg/repo"
)

// Publish adds to the repository in dir the package name at version, whose one file is the
// command bin/name printing "name version", writing its archive in tmp first.
func Publish(dir, tmp, name, version string, depends ...string) (repo.Package, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	data := []byte("#!/bin/sh\necho " + name + " " + version + "\n")
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "bin/", Mode: 0o755},
		{Typeflag: tar.TypeReg, Name: "bin/" + name, Mode: 0o755, Size: int64(len(data))},
	} {
		h.ModTime = time.Unix(1700000000, 0)
		if err := tw.WriteHeader(h); err != nil {
			return repo.Package{}, err
		}
	}
	if _, err := tw.Write(data); err != nil {
		return repo.Package{}, err
	}
	if err := tw.Close(); err != nil {
		return repo.Package{}, err
	}
	archive := filepath.Join(tmp, name+"-"+version+".tar")
	if err := os.WriteFile(archive, b.Bytes(), 0o644); err != nil {
		return repo.Package{}, err
	}
	deps, err := repo.ParseRequirements(depends)
	if err != nil {
		return repo.Package{}, err
	}
	res, err := repo.Add(context.Background(), dir, archive, repo.Package{Name: name, Version: version, Depends: deps, Bin: Commands("bin/" + name)}, false, nil)
	if err != nil {
		return repo.Package{}, err
	}
	return res.Package, nil
}

// Requires returns the requirements written ss, as a record holds them; it panics on one
// that does not parse, as regexp.MustCompile does.
func Requires(ss ...string) []repo.Requirement {
	rs, err := repo.ParseRequirements(ss)
	if err != nil {
		panic(err)
	}
	return rs
}

// Commands returns the commands of the bin entries given, as a record holds them.
func Commands(entries ...string) []repo.Command {
	cs := make([]repo.Command, len(entries))
	for i, e := range entries {
		cs[i] = repo.ParseCommand(e)
	}
	return cs
}
