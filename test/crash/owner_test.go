package crash

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"pkg/internal/testfs"
)

// TestRootInUsersCache runs pkg as root with a cache of another user's, one the user filled
// or one root makes under their home, and fills it (an XFS, so that entries have tails
// directories): all it
// leaves there is the user's but for root's own check log (checked.BOOT.0), and the user then installs
// from it offline, verifies and prunes it.
func TestRootInUsersCache(t *testing.T) {
	setpriv := setprivPath(t)
	mnt := testfs.Mount(t, "xfs")
	for d := mnt; d != "/"; d = filepath.Dir(d) { // t.TempDir's are private to root
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o005 != 0o005 { // only those, their other bits kept: /tmp keeps its sticky bit
			if err := os.Chmod(d, info.Mode()|0o005); err != nil {
				t.Fatal(err)
			}
		}
	}
	repoDir := filepath.Join(mnt, "repo")
	publish(t, repoDir, appSpec("app", "1", 10, "lib"), libSpec("lib", "1.0"))
	bin := testfs.PkgBinary(t)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, theirs := range []bool{false, true} {
		name := map[bool]string{false: "made by root", true: "made by the user"}[theirs]
		home := filepath.Join(mnt, "home-"+strconv.FormatBool(theirs))
		if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{home, filepath.Join(home, ".cache")} {
			if err := os.Chown(d, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		cache := filepath.Join(home, ".cache", "pkg")
		user := &env{t: t, bin: bin, root: filepath.Join(home, "root"), cache: cache, repo: repoDir}
		nobody := func(args ...string) {
			t.Helper()
			if out, err := asNobody(user.command(args...), setpriv, home).CombinedOutput(); err != nil {
				t.Errorf("%s: pkg %s as the cache's owner: %v\n%s", name, strings.Join(args, " "), err, out)
			}
		}
		if theirs {
			nobody("fetch", "lib")
		}
		asRoot := &env{t: t, bin: bin, root: home + "-root", cache: cache, repo: repoDir}
		asRoot.ok("install", "app")

		tails := 0
		if err := filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if strings.HasSuffix(path, ".tails") && d.IsDir() {
				tails++
			}
			if st := info.Sys().(*syscall.Stat_t); (st.Uid != 65534 || st.Gid != 65534) && !(strings.HasPrefix(d.Name(), "checked.") && strings.HasSuffix(d.Name(), ".0")) {
				t.Errorf("%s: after root's install: %s is %d:%d, want the cache owner's 65534:65534", name, path, st.Uid, st.Gid)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if tails == 0 {
			t.Errorf("%s: no tails directory in %s: the test does not cover them", name, cache)
		}

		nobody("--offline", "install", "app")
		nobody("verify")
		nobody("cache", "prune")
		if _, err := os.Stat(filepath.Join(user.root, "bin", "app")); err != nil {
			t.Errorf("%s: the owner's install: %v", name, err)
		}
	}
}
