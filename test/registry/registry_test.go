package registry

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testfs.RemovePkgBinary()
	os.Exit(code)
}

// env runs the pkg binary with a home of its own.
type env struct {
	t        *testing.T
	bin      string
	home     string
	said     []string // every output, to find no credential in
	password string
	extra    []string // more environment
}

// run runs pkg with args and returns its outputs and exit code.
func (e *env) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = []string{"HOME=" + e.home, "XDG_CONFIG_HOME=" + e.home + "/config", "XDG_CACHE_HOME=" + e.home + "/cache",
		"XDG_DATA_HOME=" + e.home + "/data", "TERM=dumb", "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin"}
	cmd.Env = append(cmd.Env, e.extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		e.t.Fatal(err)
	}
	e.said = append(e.said, out.String(), errb.String())
	return out.String(), errb.String(), code
}

// ok runs pkg with args and returns its standard output, failing unless it exits 0.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("pkg %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// tarOf returns a tar of one file, path, with data and mode.
func tarOf(t *testing.T, path string, data []byte, mode int64) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: path, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(data)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRegistry is must-shows 1 and 3 of #34 and the CLI's side of 2: a signed repository
// pushed to docker-registry with token auth (chunked, and again sending nothing), installed
// from oci:// into a root and cache on XFS with the files' blocks shared with the cache,
// a blob cut mid-way resumed by a Range request (the registry's log shows the 206), a
// second install offline, a lockfile made from the registry and synced from it, and a push
// with a wrong password refused with exit 1 and a hint, no credential printed anywhere.
func TestRegistry(t *testing.T) {
	testfs.NeedTools(t, "docker-registry")
	mnt := testfs.Mount(t, "xfs")
	e := &env{t: t, bin: testfs.PkgBinary(t), home: t.TempDir(), password: "s3cret"}
	ts := newTokenServer(t)
	reg := startRegistry(t, t.TempDir(), ts, "")
	const cut = 1 << 20
	px := newProxy(t, reg.addr, cut)

	dir, tmp := filepath.Join(mnt, "repo"), t.TempDir()
	key := filepath.Join(tmp, "key")
	pub := strings.TrimSpace(e.ok("repo", "keygen", "-o", key))
	big := random(t, 3<<20)
	writeFile(t, filepath.Join(tmp, "hello-1.0.tar"), tarOf(t, "bin/hello", []byte("#!/bin/sh\necho hello from a registry\n"), 0o755))
	writeFile(t, filepath.Join(tmp, "big-1.0.tar"), tarOf(t, "share/big.bin", big, 0o644))
	e.ok("repo", "add", dir, filepath.Join(tmp, "hello-1.0.tar"), "--name", "hello", "--version", "1.0", "--bin", "bin/hello", "--key", key)
	e.ok("repo", "add", dir, filepath.Join(tmp, "big-1.0.tar"), "--name", "big", "--version", "1.0", "--key", key)
	bigTar, err := os.ReadFile(filepath.Join(dir, "big-1.0.tar"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bigTar)
	bigBlob := "/v2/pkg/main/blobs/sha256:" + hex.EncodeToString(sum[:])

	target := "oci://bob:" + e.password + "@" + reg.addr + "/pkg/main"
	if out := e.ok("repo", "push", dir, target, "--chunk-size", "1MiB"); !strings.Contains(out, "5 blobs sent") {
		t.Errorf("first push: %s; want the config, index, signature and 2 archives sent", out)
	}
	if log := reg.logged(t); strings.Count(log, `"PATCH /v2/pkg/main/blobs/uploads/`) < 4 {
		t.Errorf("the 3 MiB archive did not go in 1 MiB chunks: the registry logged %d PATCHes", strings.Count(log, `"PATCH /v2/pkg/main/blobs/uploads/`))
	}
	// Again, the credentials in the variables of the repository's name (main).
	e.extra = []string{"PKG_REPO_MAIN_USERNAME=bob", "PKG_REPO_MAIN_PASSWORD=" + e.password}
	if out := e.ok("repo", "push", dir, "oci://"+reg.addr+"/pkg/main"); !strings.Contains(out, "0 blobs sent") || !strings.Contains(out, "5 blobs already there") {
		t.Errorf("second push: %s; want nothing sent", out)
	}
	e.extra = nil

	// Anonymous pull, through the proxy that cuts the big blob after 1 MiB.
	url := "oci://" + px.addr() + "/pkg/main"
	root, cache := filepath.Join(mnt, "root"), filepath.Join(mnt, "cache")
	px.armed.Store(true)
	e.ok("--root", root, "--cache", cache, "--repo", url, "--trusted-key", pub, "install", "hello", "big")
	if px.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", px.cuts.Load())
	}
	if log := reg.logged(t); !strings.Contains(log, `"GET `+bigBlob+` HTTP/1.1" 206 `) {
		t.Errorf("the registry's log shows no 206 for %s:\n%s", bigBlob, grepLines(log, bigBlob))
	}
	if out, err := exec.Command(filepath.Join(root, "bin", "hello")).Output(); err != nil || string(out) != "hello from a registry\n" {
		t.Errorf("bin/hello: %q, %v", out, err)
	}
	file := filepath.Join(root, "pkgs", "big", "share", "big.bin")
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("%s: %d bytes, %v; want the archive's", file, len(got), err)
	}
	if shared, mapped, err := testfs.SharedBytes(file); err != nil || mapped == 0 || shared < mapped-4096 {
		t.Errorf("%s: %d of %d bytes shared with the cache (%v), want all but the tail", file, shared, mapped, err)
	}

	// A lockfile from the registry, synced into a fresh root and cache.
	lock := filepath.Join(tmp, "pkg.lock")
	e.ok("--root", root, "--cache", cache, "--repo", url, "--trusted-key", pub, "lock", "-o", lock, "hello", "big")
	locked, err := os.ReadFile(lock)
	if err != nil || !strings.Contains(string(locked), url+":latest/") {
		t.Fatalf("lockfile: %v\n%s", err, locked)
	}
	root3, cache3 := filepath.Join(mnt, "root3"), filepath.Join(mnt, "cache3")
	e.ok("--root", root3, "--cache", cache3, "--trusted-key", pub, "sync", "-f", lock)
	if got, err := os.ReadFile(filepath.Join(root3, "pkgs", "big", "share", "big.bin")); err != nil || !bytes.Equal(got, big) {
		t.Errorf("synced big: %d bytes, %v", len(got), err)
	}

	// Offline, with the registry gone: the cache has it all.
	reg.cmd.Process.Kill()
	root2 := filepath.Join(mnt, "root2")
	e.ok("--root", root2, "--cache", cache, "--repo", url, "--trusted-key", pub, "--offline", "install", "hello", "big")
	if shared, mapped, err := testfs.SharedBytes(filepath.Join(root2, "pkgs", "big", "share", "big.bin")); err != nil || shared < mapped-4096 {
		t.Errorf("offline install: %d of %d bytes shared (%v)", shared, mapped, err)
	}

	e.checkNoPassword(root, cache, root2, root3, cache3, lock)
}

// TestRegistryRefusals is the CLI's side of must-show 2: each refusal exits 1 with the
// registry and the digest or realm named, a hint, and no credential printed: a wrong
// password, a blob the registry serves other bytes for, a blob it lacks, a manifest whose
// index is older than the one accepted, a challenge whose realm is a link-local address.
func TestRegistryRefusals(t *testing.T) {
	testfs.NeedTools(t, "docker-registry")
	e := &env{t: t, bin: testfs.PkgBinary(t), home: t.TempDir(), password: "wrong-pass"}
	ts := newTokenServer(t)
	reg := startRegistry(t, t.TempDir(), ts, "")
	dir, tmp := filepath.Join(t.TempDir(), "repo"), t.TempDir()
	key := filepath.Join(tmp, "key")
	pub := strings.TrimSpace(e.ok("repo", "keygen", "-o", key))
	hello := tarOf(t, "bin/hello", []byte("#!/bin/sh\n"), 0o755)
	writeFile(t, filepath.Join(tmp, "hello-1.0.tar"), hello)
	e.ok("repo", "add", dir, filepath.Join(tmp, "hello-1.0.tar"), "--name", "hello", "--version", "1.0", "--key", key)
	old := filepath.Join(tmp, "old")
	testfs.Run(t, "", "cp", "-a", dir, old)
	e.ok("repo", "sign", dir, "--key", key)
	sum := sha256.Sum256(hello)
	digest := hex.EncodeToString(sum[:])

	push := "oci://bob:s3cret@" + reg.addr + "/pkg/main"
	url := "oci://" + reg.addr + "/pkg/main"
	e.ok("repo", "push", dir, push)
	cache := t.TempDir()
	install := func(cache string) []string {
		return []string{"--root", t.TempDir(), "--cache", cache, "--repo", url, "--trusted-key", pub, "install", "hello"}
	}
	e.ok(install(cache)...)

	refused := func(what string, args []string, want ...string) {
		t.Helper()
		_, stderr, code := e.run(args...)
		t.Logf("%s:\n%s", what, stderr)
		if code != 1 || !strings.Contains(stderr, "pkg: hint:") {
			t.Errorf("%s: exit %d, want 1 and a hint:\n%s", what, code, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: the error does not name %s:\n%s", what, w, stderr)
			}
		}
	}
	wrong := "oci://bob:" + e.password + "@" + reg.addr + "/pkg/main"
	refusedURL := "hint: the repository main (oci://" + reg.addr + "/pkg/main) refused the credential in the URL"
	refused("push with a wrong password", []string{"repo", "push", dir, wrong}, reg.addr+"/pkg/main", "401", refusedURL)
	refused("install with a wrong password", []string{"--root", t.TempDir(), "--repo", wrong, "install", "hello"}, reg.addr+"/pkg/main", "401", refusedURL)

	blob := reg.blobFile(digest)
	good, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, blob, bytes.Repeat([]byte{'x'}, len(good)))
	refused("a tampered blob", install(t.TempDir()), reg.addr+"/v2/pkg/main/blobs/sha256:"+digest)
	os.Remove(blob)
	refused("a missing blob", install(t.TempDir()), reg.addr+"/v2/pkg/main/blobs/sha256:"+digest)
	writeFile(t, blob, good)

	e.ok("repo", "push", "--force", old, push) // a publisher starting over: the clients that accepted version 2 refuse it
	refused("a rollback", install(cache), url+":latest/", "version 1")

	other := startRegistry(t, t.TempDir(), ts, "http://169.254.169.254/token")
	refused("a realm on a link-local address", []string{"--root", t.TempDir(), "--repo", "oci://" + other.addr + "/pkg/main", "install", "hello"},
		other.addr+"/pkg/main", "169.254.169.254")
	e.checkNoPassword()
}

// TestRegistryBasic: a registry taking HTTP basic authentication (htpasswd). A push
// without credentials, an install with a wrong password and an install without any exit
// 1 with a hint naming where pkg looked; the credentials of the variables of the target's
// name push, those of the configuration install; the directory pushed again without its
// index.json.sig is refused and leaves the signed index tagged; no credential is printed.
func TestRegistryBasic(t *testing.T) {
	testfs.NeedTools(t, "docker-registry")
	e := &env{t: t, bin: testfs.PkgBinary(t), home: t.TempDir(), password: "s3cret"}
	reg := startBasicRegistry(t, t.TempDir())
	dir, tmp := filepath.Join(t.TempDir(), "tools"), t.TempDir()
	key := filepath.Join(tmp, "key")
	pub := strings.TrimSpace(e.ok("repo", "keygen", "-o", key))
	writeFile(t, filepath.Join(tmp, "hello-1.0.tar"), tarOf(t, "bin/hello", []byte("#!/bin/sh\necho hello\n"), 0o755))
	e.ok("repo", "add", dir, filepath.Join(tmp, "hello-1.0.tar"), "--name", "hello", "--version", "1.0", "--bin", "bin/hello", "--key", key)
	url := "oci://" + reg.addr + "/team/tools"

	refused := func(what, want string, args ...string) {
		t.Helper()
		_, stderr, code := e.run(args...)
		if code != 1 || !strings.Contains(stderr, "401 Unauthorized") || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want 1, a 401 and %q:\n%s", what, code, want, stderr)
		}
	}
	refused("push without credentials", "hint: if the repository tools ("+url+") needs credentials, set PKG_REPO_TOOLS_TOKEN", "repo", "push", dir, url)
	e.extra = []string{"PKG_REPO_TOOLS_USERNAME=bob", "PKG_REPO_TOOLS_PASSWORD=" + e.password}
	e.ok("repo", "push", dir, url)
	e.extra = []string{"PKG_REPO_TOOLS_USERNAME=bob", "PKG_REPO_TOOLS_PASSWORD=wrong"}
	refused("install with a wrong password", "hint: the repository tools ("+url+") refused the credential of PKG_REPO_TOOLS_USERNAME and PKG_REPO_TOOLS_PASSWORD",
		"--root", t.TempDir(), "--repo", url, "--trusted-key", pub, "install", "hello")
	e.extra = nil
	refused("install without credentials", "hint: if the repository tools ("+url+") needs credentials", "--root", t.TempDir(), "--repo", url, "--trusted-key", pub, "install", "hello")

	conf := filepath.Join(e.home, "config", "pkg", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[repo.tools]\nurls = [\""+url+"\"]\nkeys = [\""+pub+"\"]\nusername = \"bob\"\npassword = \""+e.password+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	e.ok("--root", root, "install", "hello")
	if out, err := exec.Command(filepath.Join(root, "bin", "hello")).Output(); err != nil || string(out) != "hello\n" {
		t.Errorf("bin/hello: %q, %v", out, err)
	}

	if err := os.Remove(filepath.Join(dir, "index.json.sig")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.run("repo", "push", dir, url)
	if code != 1 || !strings.Contains(stderr, "the index is not signed (no index.json.sig), but the one tagged there is") || !strings.Contains(stderr, "pkg: hint: ") {
		t.Errorf("push without the signature over the signed index: exit %d, want 1, the refusal and a hint:\n%s", code, stderr)
	}
	e.ok("--root", t.TempDir(), "--cache", t.TempDir(), "install", "hello") // the tag still names the signed index
	e.checkNoPassword(root)
}

// checkNoPassword fails if the password is in anything pkg printed or in any file under
// dirs.
func (e *env) checkNoPassword(dirs ...string) {
	e.t.Helper()
	for _, s := range e.said {
		if strings.Contains(s, e.password) {
			e.t.Errorf("pkg printed the password:\n%s", s)
		}
	}
	for _, d := range dirs {
		filepath.Walk(d, func(path string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(e.password)) {
				e.t.Errorf("%s holds the password", path)
			}
			return nil
		})
	}
}

// grepLines returns the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
