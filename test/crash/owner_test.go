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
// directories): all it leaves there is the user's but for root's own check log
// (checked.BOOT.0), and the user then installs from it offline, verifies and prunes it.
func TestRootInUsersCache(t *testing.T) {
	setpriv := setprivPath(t)
	mnt, repoDir, bin := usersWorld(t)
	for _, theirs := range []bool{false, true} {
		name := map[bool]string{false: "made by root", true: "made by the user"}[theirs]
		home := filepath.Join(mnt, "home-"+strconv.FormatBool(theirs))
		cache := nobodysHome(t, home)
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
			if strings.HasSuffix(path, ".tails") && d.IsDir() {
				tails++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		notNobodys(t, cache, name+": after root's install")
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

// TestRootRunInUsersCache runs pkg run as root with a cache of another user's: the run root,
// its .used file and the memo it leaves are the user's, whose own pkg run of the same
// package then works and whose cache clean removes the run root.
func TestRootRunInUsersCache(t *testing.T) {
	setpriv := setprivPath(t)
	mnt, repoDir, bin := usersWorld(t)
	home := filepath.Join(mnt, "home")
	cache := nobodysHome(t, home)
	user := &env{t: t, bin: bin, root: filepath.Join(home, "root"), cache: cache, repo: repoDir}
	nobody := func(args ...string) string {
		t.Helper()
		out, err := asNobody(user.command(args...), setpriv, home).CombinedOutput()
		if err != nil {
			t.Errorf("pkg %s as the cache's owner: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	asRoot := &env{t: t, bin: bin, root: home + "-root", cache: cache, repo: repoDir}
	if out, _ := asRoot.ok("run", "app"); out != "app 1\n" {
		t.Errorf("pkg run app as root: %q, want %q", out, "app 1\n")
	}
	asRoot.ok("run", "app") // again, reusing the run root by its memo
	sets, err := filepath.Glob(filepath.Join(cache, "run", "*.used"))
	if err != nil || len(sets) != 1 {
		t.Fatalf("run roots after root's pkg run: %v, %v; want one", sets, err)
	}
	if _, err := os.Stat(filepath.Join(cache, "run", "memo")); err != nil {
		t.Fatalf("root's pkg run left no memo: %v", err)
	}
	notNobodys(t, cache, "after root's pkg run")
	linked := 0
	if err := filepath.WalkDir(strings.TrimSuffix(sets[0], ".used"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err == nil && !d.IsDir() && info.Sys().(*syscall.Stat_t).Nlink > 1 {
			linked++
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if linked == 0 {
		t.Errorf("no file of the run root %s has two links: the test does not cover the merged prefix's", sets[0])
	}

	if out := nobody("run", "app"); !strings.Contains(out, "app 1\n") {
		t.Errorf("pkg run app as the cache's owner: %q", out)
	}
	if out := nobody("run", "--refresh", "app"); !strings.Contains(out, "app 1\n") {
		t.Errorf("pkg run --refresh app as the cache's owner: %q", out)
	}
	nobody("cache", "clean")
	left, err := os.ReadDir(filepath.Join(cache, "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if e.Name() != "memo" {
			t.Errorf("the owner's cache clean left run/%s", e.Name())
		}
	}
}

// usersWorld mounts an XFS that another user can reach, publishes app and lib in a
// repository there, and returns the mount, the repository and pkg's binary, reachable too.
func usersWorld(t *testing.T) (mnt, repoDir, bin string) {
	mnt = testfs.Mount(t, "xfs")
	for d := mnt; d != "/"; d = filepath.Dir(d) { // t.TempDir's are private to root
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o005 != 0o005 { // only those, their other bits kept: /tmp keeps its sticky bit
			if err := os.Chmod(d, info.Mode()|0o005); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, info.Mode()) }) // the host's directories as they were
		}
	}
	repoDir = filepath.Join(mnt, "repo")
	publish(t, repoDir, appSpec("app", "1", 10, "lib"), libSpec("lib", "1.0"))
	bin = testfs.PkgBinary(t)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	return mnt, repoDir, bin
}

// nobodysHome makes home and its .cache nobody's (65534) and returns the path of the
// cache pkg makes there.
func nobodysHome(t *testing.T, home string) (cache string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{home, filepath.Join(home, ".cache")} {
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(home, ".cache", "pkg")
}

// notNobodys fails the test for each file of the cache that is not the cache owner's
// (nobody's), but for root's own check log, which root keeps.
func notNobodys(t *testing.T, cache, when string) {
	t.Helper()
	err := filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st := info.Sys().(*syscall.Stat_t); (st.Uid != 65534 || st.Gid != 65534) && !(strings.HasPrefix(d.Name(), "checked.") && strings.HasSuffix(d.Name(), ".0")) {
			t.Errorf("%s: %s is %d:%d, want the cache owner's 65534:65534", when, path, st.Uid, st.Gid)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
