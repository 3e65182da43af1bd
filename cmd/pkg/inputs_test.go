package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/trust"
)

// TestFIFOs: a FIFO where pkg reads a file that a user, or another user, names or may
// write (configuration, trusted keys, a lockfile, a local repository's index and
// signature, a signing key, the archive of repo add) ends the command at once with an
// error naming the path and what it is; before, each open waited for a writer for ever.
func TestFIFOs(t *testing.T) {
	tests := []struct {
		name string
		fifo string   // relative to the test's directory
		args []string // after the env's global flags; {base} is the test's directory
	}{
		{"user config", "xdg/pkg/config.toml", []string{"search"}},
		{"root config", "root/.pkg/config.toml", []string{"search"}},
		{"root trusted keys", "root/.pkg/trusted-keys", []string{"trust", "list"}},
		{"lockfile of sync", "pkg.lock", []string{"sync", "--file", "{base}/pkg.lock"}},
		{"lockfile of lock", "pkg.lock", []string{"lock", "--output", "{base}/pkg.lock"}},
		{"lockfile of run", "pkg.lock", []string{"run", "--lock", "{base}/pkg.lock", "hello"}},
		{"local index", "local/index.json", []string{"search"}},
		{"local signature", "local/index.json.sig", []string{"--require-signed", "search"}},
		{"signing key", "key", []string{"repo", "sign", "--key", "{base}/key", "{base}/signed"}},
		{"archive of repo add", "x.tar.gz", []string{"repo", "add", "--name", "x", "--version", "1", "{base}/signed", "{base}/x.tar.gz"}},
		{"repository index of repo add", "signed/index.json", []string{"repo", "add", "--name", "x", "--version", "1", "{base}/signed", demoRepo + "/hello-1.2.0.tar.zst"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg"))
			e := newEnv(t, base, demoRepo)
			if strings.HasPrefix(tt.fifo, "local/") {
				e.repo = filepath.Join(base, "local") // the first repository: its error is the command's
			}
			e.initRoot()
			for _, dir := range []string{"xdg/pkg", "local", "signed"} {
				if err := os.MkdirAll(filepath.Join(base, dir), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(base, "local", "index.json"), []byte(`{"format":1,"packages":[]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(base, tt.fifo)
			os.Remove(fifo)
			if err := unix.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.ReplaceAll(a, "{base}", base)
			}
			_, stderr, code := pkgWithin(t, e, 5*time.Second, fifo, args...)
			if code != 1 || !strings.Contains(stderr, fifo+": a named pipe (FIFO), not a regular file") {
				t.Errorf("pkg %v: exit %d, stderr %q; want 1 and an error naming %s as a named pipe", args, code, stderr, fifo)
			}
		})
	}
}

// pkgWithin runs pkg as e.pkg does, and fails the test if it has not ended within limit.
// Then it opens fifo for writing, and closes it, so that a pkg blocked opening it goes on.
func pkgWithin(t *testing.T, e *env, limit time.Duration, fifo string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		o, er, c := e.pkg(args...)
		done <- result{o, er, c}
	}()
	select {
	case r := <-done:
		return r.stdout, r.stderr, r.code
	case <-time.After(limit):
		t.Errorf("pkg %v still running after %v", args, limit)
	}
	for {
		if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
		select {
		case r := <-done:
			return r.stdout, r.stderr, r.code
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestSyncArchiveOutside: a lockfile naming a local file that is not beneath its
// repository as an archive (any file of the machine, /etc/shadow, /proc/self/environ)
// is refused before anything is read: neither the file's size nor its sha256 is
// printed (a size other than the lockfile's is, when read). So is one whose recorded repository is a directory that is no repository.
func TestSyncArchiveOutside(t *testing.T) {
	sizeShown := func(out string) bool { // 4321 as a number of its own, not in a longer one
		isDigit := func(r rune) bool { return r >= '0' && r <= '9' }
		return slices.Contains(strings.FieldsFunc(out, func(r rune) bool { return !isDigit(r) }), "4321")
	}
	base := t.TempDir()
	repoDir := syncRepo(t)
	secret := filepath.Join(base, "secret")
	data := strings.Repeat("s", 4321)
	if err := os.WriteFile(secret, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(data))
	tests := []struct {
		name, repo string
		noRepo     bool   // the sync is given no --repo: the lockfile's own is used
		named      string // in the error
	}{
		{"outside its repository", "file://" + repoDir + "/", false, secret},
		{"outside its repository, no --repo", "file://" + repoDir + "/", true, secret},
		{"beneath a directory that is no repository", "file://" + base + "/", true, filepath.Join(base, "index.json")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, t.TempDir(), repoDir)
			lock := e.root + ".lock"
			p := repo.Package{Name: "tool", Version: "1.0", Archive: "file://" + secret, Size: 1 << 20, SHA256: hex.EncodeToString(sum[:])}
			if err := repo.WriteLock(lock, repo.NewLock(tt.repo, []repo.Requirement{{Name: "tool"}}, []repo.Package{p})); err != nil {
				t.Fatal(err)
			}
			args := []string{"pkg", "--root", e.root, "--cache", e.cache}
			if !tt.noRepo {
				args = append(args, "--repo", repoDir)
			}
			var stdout, stderr bytes.Buffer
			code := run(append(args, "sync", "-f", lock), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			// The size as a number of its own: the temporary directories' names are digits too.
			if code != 1 || sizeShown(out) || strings.Contains(out, "4.2 KiB") || strings.Contains(out, p.SHA256) || !strings.Contains(out, tt.named) {
				t.Errorf("sync of a lockfile naming %s: exit %d, output %q; want 1, naming %s, with neither its size nor its sha256", secret, code, out, tt.named)
			}
			if _, err := os.Stat(filepath.Join(e.root, "pkgs", "tool")); err == nil {
				t.Error("tool installed")
			}
		})
	}
}

// TestReadLockOutside: the typed errors of the two refusals above.
func TestReadLockOutside(t *testing.T) {
	base := t.TempDir()
	lock := filepath.Join(base, "pkg.lock")
	p := repo.Package{Name: "tool", Version: "1.0", Archive: "file:///etc/shadow", SHA256: strings.Repeat("0", 64)}
	if err := repo.WriteLock(lock, repo.NewLock("file://"+base+"/", []repo.Requirement{{Name: "tool"}}, []repo.Package{p})); err != nil {
		t.Fatal(err)
	}
	var out *repo.OutsideError
	if _, err := repo.ReadLockFor(lock, nil); !errors.As(err, &out) || out.Archive != p.Archive {
		t.Errorf("ReadLock: %v; want a *repo.OutsideError naming %s", err, p.Archive)
	}
}

// hostileText are strings a repository, a lockfile, a --repo value or another user of a
// shared root may hold, each something a terminal acts on: set its title, write the
// clipboard, clear the screen, CSI in C1, show the rest reversed or isolated.
var hostileText = []string{
	"\x1b]0;pwned\a",
	"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\a",
	"\x1b[2J\x1b[H",
	"\u009b2J",
	"\u202egpj.exe",
	"\u2066x\u2069\u200f",
}

// rawControl returns the first character of s a terminal would act on, and whether there is one.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == utf8.RuneError,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, true
		}
	}
	return 0, false
}

// TestOutsideTextEscaped: text from outside reaches the terminal escaped, whatever it goes
// through: an index's summary, command names and archive names (search, info, install),
// a --repo value (refused, naming it escaped), a lockfile's repository and archive URL,
// and the holder line of a root's .pkg/lock that another user of the root wrote.
func TestOutsideTextEscaped(t *testing.T) {
	for i, h := range hostileText {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			base := t.TempDir()
			repoDir := filepath.Join(base, "repo")
			if err := os.MkdirAll(repoDir, 0o755); err != nil {
				t.Fatal(err)
			}
			index := map[string]any{"format": 1, "packages": []map[string]any{{
				"name": "tool", "version": "1.0", "archive": "tool" + h + ".tar", "size": 10, "sha256": strings.Repeat("0", 64),
				"summary": "a tool " + h, "bin": []string{"x" + h + "=bin/tool"},
			}}}
			data, err := json.Marshal(index)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repoDir, "index.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, base, repoDir)
			e.initRoot()
			check := func(what string, args ...string) {
				t.Helper()
				var stdout, stderr bytes.Buffer
				run(append([]string{"pkg", "--root", e.root, "--cache", e.cache, "--lock-timeout", "300ms"}, args...), &stdout, &stderr)
				for _, out := range []string{stdout.String(), stderr.String()} {
					if r, ok := rawControl(out); ok {
						t.Errorf("%s: %U printed raw in %q", what, r, out)
					}
				}
			}
			check("search", "--repo", repoDir, "search")
			check("search --json", "--repo", repoDir, "search", "--json")
			check("info", "--repo", repoDir, "info", "tool")
			check("install", "--repo", repoDir, "install", "tool")

			check("--repo", "--repo", filepath.Join(base, h), "search")
			var stderr bytes.Buffer
			if code := run([]string{"pkg", "--root", e.root, "--cache", e.cache, "--repo", h, "search"}, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "bad repository location") {
				t.Errorf("--repo %q: exit %d, %q; want it refused", h, code, stderr.String())
			}

			lock := filepath.Join(base, "pkg.lock")
			p := repo.Package{Name: "tool", Version: "1.0", Archive: "file://" + repoDir + "/tool" + h + ".tar", Size: 10, SHA256: strings.Repeat("0", 64)}
			if err := repo.WriteLock(lock, repo.NewLock("file://"+repoDir+"/"+h+"/", []repo.Requirement{{Name: "tool"}}, []repo.Package{p})); err != nil {
				t.Fatal(err)
			}
			check("sync of a lockfile with the text in its repository", "sync", "-f", lock)
			if err := repo.WriteLock(lock, repo.NewLock("file://"+repoDir+"/", []repo.Requirement{{Name: "tool"}}, []repo.Package{p})); err != nil {
				t.Fatal(err)
			}
			check("sync of a lockfile with the text in an archive's URL", "sync", "-f", lock)

			holder, err := os.OpenFile(filepath.Join(e.root, ".pkg", "lock"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			if err := unix.Flock(int(holder.Fd()), unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.WriteString("pid 1 (" + h + ")\n"); err != nil {
				t.Fatal(err)
			}
			check("remove, waiting for the root's lock", "--repo", repoDir, "remove", "tool")
			check("list of a busy root", "--repo", repoDir, "list")
		})
	}
}

// TestInterruptLockWaits: repo add, remove and sign wait for the repository directory's
// lock, and every command that uses the cache for its shared lock, which another process
// (a cache prune, or another user of a shared cache) holds for as long as it likes; SIGINT
// ends each, with exit 130, instead of leaving it blocked in flock(2).
func TestInterruptLockWaits(t *testing.T) {
	bin := testfs.PkgBinary(t)
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	e := newEnv(t, base, dir)
	e.ok("fetch", "lib")
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(base, "key")
	if err := trust.WriteKeyFile(key, k); err != nil {
		t.Fatal(err)
	}
	holdFlock(t, dir)
	holdFlock(t, e.cache)
	for _, args := range [][]string{
		{"repo", "add", "--name", "tool", "--version", "1", dir, filepath.Join(demoRepo, "hello-1.2.0.tar.zst")},
		{"repo", "remove", dir, "lib"},
		{"repo", "sign", "--key", key, dir},
		{"--repo", dir, "install", "lib"},
		{"cache", "list"},
	} {
		interruptWaiting(t, bin, append([]string{"--root", e.root, "--cache", e.cache}, args...)...)
	}
}
