package testfs

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// AptDownload downloads the named Debian packages, as the host's apt sources have them,
// into a temporary directory of t with apt-get download, and returns their paths in the
// order of names. Real .debs are fetched at test time, never committed. Without apt-get,
// or when it cannot fetch them (no mirror, no lists: apt-get update), it skips t saying
// why, or fails it under CI=true (Unavailable).
func AptDownload(t testing.TB, names ...string) []string {
	t.Helper()
	NeedTools(t, "apt-get")
	dir := t.TempDir()
	cmd := exec.Command("apt-get", append([]string{"download", "-q"}, names...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		Unavailable(t, fmt.Sprintf("apt-get download %s: %v: %s", strings.Join(names, " "), err, out))
	}
	paths := make([]string, len(names))
	for i, name := range names {
		found, _ := filepath.Glob(filepath.Join(dir, name+"_*.deb"))
		if len(found) != 1 {
			t.Fatalf("apt-get download %s: %d files named %s_*.deb, want 1", name, len(found), name)
		}
		paths[i] = found[0]
	}
	return paths
}
