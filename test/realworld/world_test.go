package realworld

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"pkg/fetch"
	"pkg/internal/shell"
	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/tarutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testfs.RemovePkgBinary()
	os.Exit(code)
}

// world is the pkg binary with a repository, a cache and a root on one fresh loop XFS, the
// repository holding the .debs of a closure, each added with plain `pkg repo add`.
type world struct {
	t                      testing.TB
	bin, repo, cache, root string
	home                   string // HOME and the XDG directories of every command run
	debs                   map[string]deb
}

// newWorld publishes the closure of roots (closure) as the host's apt offers it.
func newWorld(t testing.TB, roots ...string) *world {
	t.Helper()
	names := closure(t, roots...)
	debs := download(t, names)
	t.Logf("publishing the closure of %s: %d packages: %s", strings.Join(roots, ", "), len(names), strings.Join(names, " "))
	mnt := testfs.Mount(t, "xfs")
	w := &world{t: t, bin: testfs.PkgBinary(t), repo: filepath.Join(mnt, "repo"), cache: filepath.Join(mnt, "cache"),
		root: filepath.Join(mnt, "root"), home: t.TempDir(), debs: map[string]deb{}}
	for _, d := range debs {
		w.debs[d.Name] = d
		w.run("repo", "add", w.repo, d.Path)
	}
	return w
}

// env is the whole environment of what a test runs, then extra (a later NAME= wins):
// HOME and XDG directories of its own, PATH the root's bin then the system's directories,
// nothing of the test's own.
func (w *world) env(extra ...string) []string {
	env := []string{"HOME=" + w.home, "XDG_CONFIG_HOME=" + w.home + "/config", "XDG_CACHE_HOME=" + w.home + "/cache",
		"XDG_DATA_HOME=" + w.home + "/data", "TERM=dumb", "LC_ALL=C.UTF-8", w.path()}
	return append(env, extra...)
}

// path returns PATH=, the root's bin then the system's command directories that hold
// none of the commands named: the host's copies of those stay off PATH.
func (w *world) path(without ...string) string {
	dirs := []string{filepath.Join(w.root, "bin")}
	for _, dir := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if !slices.ContainsFunc(without, func(cmd string) bool { _, err := os.Stat(filepath.Join(dir, cmd)); return err == nil }) {
			dirs = append(dirs, dir)
		}
	}
	return "PATH=" + strings.Join(dirs, ":")
}

// run runs pkg with args as given and returns its standard output, failing the test
// unless it exits 0.
func (w *world) run(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.bin, args...)
	cmd.Env = w.env()
	return output(w.t, cmd)
}

// pkg runs pkg on the world's root, cache and repository.
func (w *world) pkg(args ...string) string {
	w.t.Helper()
	return w.run(append([]string{"--root", w.root, "--cache", w.cache, "--repo", w.repo}, args...)...)
}

// output runs cmd and returns its standard output, failing t with both outputs unless it
// exits 0.
func output(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// checkInstalled fails the test unless pkg list names exactly want.
func (w *world) checkInstalled(want []string) {
	w.t.Helper()
	var list struct {
		Packages []struct {
			Name string `json:"name"`
		} `json:"packages"`
	}
	out := w.pkg("list", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		w.t.Fatalf("pkg list --json: %v\n%s", err, out)
	}
	var got []string
	for _, p := range list.Packages {
		got = append(got, p.Name)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		w.t.Errorf("installed %v, want the closure %v", got, want)
	}
}

// checkShared fails the test unless the largest file of each package named is in the
// prefix at its path, the same inode as in pkgs/NAME, and every whole block of it lies on
// the blocks of its member in the cache's tar (FIEMAP): installed as a clone, never copied.
func (w *world) checkShared(names ...string) {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.repo, "index.json"))
	if err != nil {
		w.t.Fatal(err)
	}
	ix, err := repo.Parse(data)
	if err != nil {
		w.t.Fatal(err)
	}
	c, err := fetch.OpenCacheReadOnly(w.t.Context(), w.cache)
	if err != nil {
		w.t.Fatal(err)
	}
	defer c.Close()
	for _, name := range names {
		i := slices.IndexFunc(ix.Packages, func(p repo.Package) bool { return p.Name == name })
		if i < 0 {
			w.t.Fatalf("the repository's index has no %s", name)
		}
		sha := ix.Packages[i].SHA256
		ms, err := c.Members(sha)
		if err != nil {
			w.t.Fatal(err)
		}
		m := slices.MaxFunc(ms, func(a, b tarutil.Member) int { return cmp.Compare(a.Size, b.Size) })
		w.checkClone(c.Path(sha), name, m)
	}
}

// checkClone checks the member m of name's tar at tarPath, as checkShared says.
func (w *world) checkClone(tarPath, name string, m tarutil.Member) {
	w.t.Helper()
	inPrefix, inTree := filepath.Join(w.root, m.Name), filepath.Join(w.root, "pkgs", name, m.Name)
	a, err := os.Lstat(inPrefix)
	if err != nil {
		w.t.Fatalf("%s's largest file is not in the prefix: %v", name, err)
	}
	if b, err := os.Lstat(inTree); errors.Is(err, fs.ErrNotExist) {
		// In a folded directory: the prefix holds the package's directory itself, and
		// the tree an empty placeholder in its place.
		d := filepath.Dir(m.Name)
		for ; d != "."; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(w.root, "pkgs", name, d)); err == nil {
				break
			}
		}
		if es, err := os.ReadDir(filepath.Join(w.root, "pkgs", name, d)); d == "." || err != nil || len(es) > 0 {
			w.t.Errorf("%s is not in %s, and %s is not a folded directory's placeholder (%d entries, %v)", m.Name, filepath.Join(w.root, "pkgs", name), d, len(es), err)
		}
	} else if err != nil || !os.SameFile(a, b) {
		w.t.Errorf("%s is not the inode of %s (%v)", inPrefix, inTree, err)
	}
	if m.Size < 2*tarutil.Alignment {
		w.t.Fatalf("%s's largest file %s has %d bytes, too few to show sharing", name, m.Name, m.Size)
	}
	installed, err := testfs.Extents(inPrefix, 0, m.Size)
	if err != nil {
		w.t.Fatal(err)
	}
	cached, err := testfs.Extents(tarPath, m.Offset, m.Size)
	if err != nil {
		w.t.Fatal(err)
	}
	var same, blocks int64
	for at := int64(0); at+tarutil.Alignment <= m.Size; at += tarutil.Alignment {
		blocks++
		if p := testfs.PhysicalAt(installed, at); p >= 0 && p == testfs.PhysicalAt(cached, m.Offset+at) {
			same++
		}
	}
	if same != blocks {
		w.t.Errorf("%s (%d bytes): %d of its %d whole blocks on the cache tar's blocks, want all", inPrefix, m.Size, same, blocks)
	} else {
		w.t.Logf("%s: all %d whole blocks shared with the cache tar", m.Name, blocks)
	}
}

// verify fails the test unless pkg verify finds the root as installed.
func (w *world) verify() {
	w.t.Helper()
	w.pkg("verify")
}

// published returns the names of the world's published packages.
func (w *world) published() []string {
	return slices.Sorted(maps.Keys(w.debs))
}

// hidden returns a command running name with args in a mount namespace of its own
// (unshare -m, private propagation) where an empty file or directory is bound over each of
// paths, as the host's copies that must not be used. Paths that do not exist are left out.
func (w *world) hidden(paths []string, name string, args ...string) *exec.Cmd {
	w.t.Helper()
	testfs.NeedTools(w.t, "unshare", "mount")
	empty := w.t.TempDir()
	var script []string
	for i, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			continue
		}
		cover := filepath.Join(empty, fmt.Sprint(i))
		if info.IsDir() {
			err = os.Mkdir(cover, 0o755)
		} else {
			err = os.WriteFile(cover, nil, 0o644)
		}
		if err != nil {
			w.t.Fatal(err)
		}
		script = append(script, "mount --bind "+shell.Quote(cover)+" "+shell.Quote(p))
	}
	script = append(script, `exec "$@"`)
	cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", strings.Join(script, " && "), "sh", name}, args...)...)
	cmd.Env = w.env()
	return cmd
}

// hostLibs returns the real paths of the host's copies of the shared libraries named, in
// the system's library directories: what a bind mount must cover to hide them.
func hostLibs(t testing.TB, names ...string) []string {
	t.Helper()
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	var paths []string
	for _, name := range names {
		for _, dir := range []string{"/usr/lib/" + triplet, "/lib/" + triplet, "/usr/lib", "/lib"} {
			if p, err := filepath.EvalSymlinks(filepath.Join(dir, name)); err == nil && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// checkHidden fails the test unless the host's own command at host fails with paths
// hidden: proof that the hiding takes away what the root's copy must bring itself. A
// host without the command has nothing to prove it on.
func (w *world) checkHidden(paths []string, host string, args ...string) {
	w.t.Helper()
	if _, err := os.Stat(host); err != nil {
		w.t.Logf("no %s on this host to show the hiding on", host)
		return
	}
	cmd := w.hidden(paths, host, args...)
	if out, err := cmd.CombinedOutput(); err == nil {
		w.t.Errorf("the host's %s ran with %v hidden:\n%s", host, paths, out)
	}
}
