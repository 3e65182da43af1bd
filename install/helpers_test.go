package install

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	"pkg/internal/durable"
	"pkg/repo"
	"pkg/tarutil"
)

// installFrom installs p from the aligned tar at tarPath, replacing any installed version of it.
// It scans the tar and reads its data for the file digests it records; Stage takes both
// from the cache's index instead. On error the root and the database describe what was
// installed before (a failed commit may leave an intent, which the next Open completes),
// except with a *LinksError, which comes with the result: p is installed.
func (r *Root) installFrom(tarPath string, p repo.Package) (*Result, error) {
	members, err := scanWithDigests(tarPath)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p.Name, p.Version, err)
	}
	s, err := r.Stage(context.Background(), tarPath, p, members)
	if err != nil {
		return nil, err
	}
	res, err := r.Apply(context.Background(), []*Staged{s}, nil)
	if len(res) == 1 { // committed, perhaps with a LinksError
		return res[0], err
	}
	return nil, err
}

// scanWithDigests scans the aligned tar at tarPath and reads its data for each regular
// member's digest.
func scanWithDigests(tarPath string) ([]tarutil.Member, error) {
	f, err := os.Open(tarPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	members, err := tarutil.Scan(f)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for i := range members {
		if m := &members[i]; m.Type == tar.TypeReg {
			h.Reset()
			if _, err := io.Copy(h, io.NewSectionReader(f, m.Offset, m.Size)); err != nil {
				return nil, err
			}
			h.Sum(m.SHA256[:0])
		}
	}
	return members, nil
}

// uninstall uninstalls the named packages together (see Apply): the root loses all of them or
// none. It refuses, changing nothing, when one is not installed or another installed
// package depends on it.
func (r *Root) uninstall(names ...string) error {
	var unique []string
	for _, name := range names {
		if !slices.Contains(unique, name) {
			unique = append(unique, name)
		}
	}
	_, err := r.Apply(context.Background(), nil, unique)
	return err
}

// digestsOf is scanWithDigests for a test, which fails where the tar cannot be read.
func digestsOf(t testing.TB, tarPath string) []tarutil.Member {
	t.Helper()
	members, err := scanWithDigests(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	return members
}

// stageMembers stages p in r from the aligned tar at tarPath, which members describe.
func stageMembers(t testing.TB, r *Root, tarPath string, p repo.Package, members []tarutil.Member) *Staged {
	t.Helper()
	s, err := r.Stage(context.Background(), tarPath, p, members)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// applyStaged commits the staged trees in r.
func applyStaged(t testing.TB, r *Root, staged ...*Staged) []*Result {
	t.Helper()
	res, err := r.Apply(context.Background(), staged, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// installIn installs p's tree es in r, from an aligned tar made in base, and returns the
// tar's members.
func installIn(t testing.TB, r *Root, base string, p repo.Package, es []entry) []tarutil.Member {
	t.Helper()
	tarPath := alignedTar(t, base, es)
	members := digestsOf(t, tarPath)
	applyStaged(t, r, stageMembers(t, r, tarPath, p, members))
	return members
}

// skipUntracked skips t where the filesystem at dir is not tracked file by file
// (durable.TracksPath), as btrfs is not under a kernel before Linux 6.1: what t checks of a
// tracked commit does not happen there.
func skipUntracked(t *testing.T, dir string) {
	t.Helper()
	if !durable.TracksPath(dir) {
		t.Skipf("%s is synced whole under this kernel (durable.ForFS), not file by file", dir)
	}
}
