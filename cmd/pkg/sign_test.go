package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/internal/testfs"

	"pkg/db"
	"pkg/internal/shell"
	"pkg/trust"
)

// signedRepo is a copy of the demo repository, signed as repository "demo" with a key
// made by pkg repo keygen, served over HTTP.
type signedRepo struct {
	t    *testing.T
	dir  string
	url  string
	key  string // the signing key file
	pub  string // its public key, as keygen printed it
	puts int    // indexes published by put
}

func newSignedRepo(t *testing.T) *signedRepo {
	t.Helper()
	r := &signedRepo{t: t, dir: filepath.Join(t.TempDir(), "demo"), key: filepath.Join(t.TempDir(), "key")}
	if err := os.CopyFS(r.dir, os.DirFS(demoRepo)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(r.dir)))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	out, _ := r.publisher().ok("repo", "keygen", "-o", r.key)
	r.pub = strings.TrimSpace(out)
	r.sign()
	return r
}

// publisher is an env for the publisher's commands, which use no root or cache.
func (r *signedRepo) publisher() *env { return newEnv(r.t, r.t.TempDir(), r.dir) }

// sign runs pkg repo sign on the repository with extra flags.
func (r *signedRepo) sign(flags ...string) {
	r.t.Helper()
	r.publisher().ok(append([]string{"repo", "sign", r.dir, "--key", r.key}, flags...)...)
}

// files returns the index and its signature as they are.
func (r *signedRepo) files() (index, sig []byte) {
	r.t.Helper()
	index, err := os.ReadFile(filepath.Join(r.dir, "index.json"))
	if err != nil {
		r.t.Fatal(err)
	}
	sig, _ = os.ReadFile(filepath.Join(r.dir, "index.json.sig"))
	return index, sig
}

// put publishes index and sig (none if nil) as they are. The index gets a modification
// time of its own, since Last-Modified counts whole seconds: otherwise the server would
// answer that an index replaced within a second of the last request has not changed.
func (r *signedRepo) put(index, sig []byte) {
	r.t.Helper()
	path := filepath.Join(r.dir, "index.json")
	if err := os.WriteFile(path, index, 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.puts++
	mtime := time.Now().Add(time.Duration(r.puts) * time.Minute)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		r.t.Fatal(err)
	}
	sigPath := filepath.Join(r.dir, "index.json.sig")
	os.Remove(sigPath)
	if sig != nil {
		if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// signWith signs index with the repository's key, as no pkg command would, and
// publishes both.
func (r *signedRepo) signWith(index []byte) {
	r.t.Helper()
	k, err := trust.ReadKeyFile(r.key)
	if err != nil {
		r.t.Fatal(err)
	}
	r.put(index, trust.Sign(index, k))
}

// user returns an env for a user of the repository, and the global flag that trusts its key.
func (r *signedRepo) user() (*env, []string) {
	return newEnv(r.t, r.t.TempDir(), r.url), []string{"--trusted-key", r.pub}
}

// dbState describes what the root's database records: intents, packages with their files,
// and the repository's accepted index.
func dbState(t *testing.T, e *env) string {
	t.Helper()
	d, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := d.Intents()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("intents %v;", ins)
	for _, p := range ps {
		files, err := d.Files(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf(" %s %s %v %x;", p.Name, p.Version, p.Bin, files)
	}
	r, ok, err := d.Repo(e.repo + "/")
	if err != nil {
		t.Fatal(err)
	}
	return s + fmt.Sprintf(" repository %v %+v", ok, r)
}

// TestSignedRefusals: a refused index is exit 1, naming the repository's URL, with the
// advice for a pinned repository, and changes nothing; session's TestSignedRefusals has
// each refusal.
func TestSignedRefusals(t *testing.T) {
	r := newSignedRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	otherPub, _ := r.publisher().ok("repo", "keygen", "-o", other)
	good, goodSig := r.files()
	e, trusted := r.user()
	e.ok(append(trusted, "install", "libgreet")...)
	root, cache, state := rootTree(t, e.root), testfs.Tree(t, e.cache), dbState(t, e)

	r.publisher().ok("repo", "sign", r.dir, "--key", other)
	_, stderr, code := e.pkg("install", "hello")
	for _, want := range []string{r.url, "is signed by key " + keyID(t, otherPub) + ", which is not trusted", "pinned repository demo",
		"\npkg: hint: once pkg accepted a signed index", "'" + e.cmd("trust add KEY") + "'", "'" + e.cmd("repo forget") + "' unpins it"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("install of an index signed by an untrusted key: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), root)
	testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
	if got := dbState(t, e); got != state {
		t.Errorf("database changed:\n%s\nwas\n%s", got, state)
	}
	r.put(good, goodSig)
	if out, _ := e.ok(append(trusted, "install", "hello")...); !strings.Contains(out, "installed hello 1.2.0") {
		t.Errorf("install with the good index: %q", out)
	}
}

// keyID returns the key id of a public key as keygen prints it.
func keyID(t *testing.T, pub string) string {
	t.Helper()
	k, err := trust.ParsePublicKey(strings.TrimSpace(pub))
	if err != nil {
		t.Fatal(err)
	}
	return k.ID()
}

// TestSignedVerified trusts the signed repository's key by --trusted-key and by
// PKG_TRUSTED_KEYS, installing without a warning; a malformed --trusted-key is a usage
// error. Session's TestSignedVerified has the rest.
func TestSignedVerified(t *testing.T) {
	r := newSignedRepo(t)
	e, trusted := r.user()
	if _, stderr := e.ok(append(trusted, "install", "hello")...); strings.Contains(stderr, "warning") {
		t.Errorf("verified install warns:\n%s", stderr)
	}
	env := newEnv(t, t.TempDir(), r.url)
	other, _ := r.publisher().ok("repo", "keygen", "-o", filepath.Join(t.TempDir(), "other"))
	t.Setenv("PKG_TRUSTED_KEYS", strings.TrimSpace(other)+", demo="+r.pub)
	if _, stderr := env.ok("search", "hello"); stderr != "" {
		t.Errorf("PKG_TRUSTED_KEYS: stderr %q", stderr)
	}
	t.Setenv("PKG_TRUSTED_KEYS", "")
	_, stderr, code := env.pkg("--trusted-key", "pkg-ed25519:nonsense", "search")
	if code != 2 || !strings.Contains(stderr, "--trusted-key") {
		t.Errorf("a malformed --trusted-key: exit %d, %q", code, stderr)
	}
}

// TestUnverifiedWarning warns once per command about an unsigned repository and about a
// signed one whose key is not trusted, and --quiet not at all; --require-signed and
// PKG_REQUIRE_SIGNED refuse both.
func TestUnverifiedWarning(t *testing.T) {
	unsigned := newEnv(t, t.TempDir(), serve(t, demoRepo))
	r := newSignedRepo(t)
	untrusted := newEnv(t, t.TempDir(), r.url)
	for _, tt := range []struct {
		e    *env
		want string
	}{
		{unsigned, "pkg: warning: repository " + unsigned.repo + "/ is not signed; "},
		{untrusted, "pkg: warning: repository " + r.url + "/ is signed by key " + keyID(t, r.pub) + ", but no key is trusted for it, so its index is not verified; trust the publisher's key with '" + untrusted.cmd("trust add KEY") + "'"},
	} {
		if _, stderr := tt.e.ok("--quiet", "install", "hello"); stderr != "" {
			t.Errorf("--quiet install: stderr %q, want none", stderr)
		}
		_, stderr := tt.e.ok("install", "fortunes")
		if strings.Count(stderr, "pkg: warning:") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("stderr:\n%s\nwant one warning: %q", stderr, tt.want)
		}
		if _, stderr, code := tt.e.pkg("--require-signed", "search"); code != 1 || !strings.Contains(stderr, "signatures are required") {
			t.Errorf("--require-signed: exit %d, %q", code, stderr)
		}
	}
	t.Setenv("PKG_REQUIRE_SIGNED", "1")
	if _, stderr, code := unsigned.pkg("install", "fortunes"); code != 1 || !strings.Contains(stderr, "not signed") {
		t.Errorf("PKG_REQUIRE_SIGNED=1: exit %d, %q", code, stderr)
	}
}

// TestRepoKeygenSign checks the publisher's commands: keygen keeps the key private and
// never replaces one, repo add --key signs the next version, a signed repository is not
// rewritten unsigned, and pkg repo forget lets a user accept a repository started over.
func TestRepoKeygenSign(t *testing.T) {
	r := newSignedRepo(t)
	if info, err := os.Stat(r.key); err != nil || info.Mode().Perm() != 0o600 || !strings.HasPrefix(r.pub, "pkg-ed25519:") {
		t.Errorf("key file %v, %v; public key %q", info.Mode(), err, r.pub)
	}
	pub := r.publisher()
	want := "pkg: write key: " + r.key + " exists: remove it first if you mean to replace that key\n"
	if _, stderr, code := pub.pkg("repo", "keygen", "-o", r.key); code != 1 || stderr != want {
		t.Errorf("keygen over an existing key: exit %d, %q; want 1 and %q", code, stderr, want)
	}
	e, trusted := r.user()
	e.ok(append(trusted, "install", "hello")...)
	before, _ := r.files()

	archive := filepath.Join(t.TempDir(), "extra-1.0.tar")
	if err := os.WriteFile(archive, packageTar(t, "extra", "1.0", 'e'), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := pub.pkg("repo", "add", r.dir, archive, "--name", "extra", "--version", "1.0")
	if code != 1 || !strings.Contains(stderr, "is signed") {
		t.Errorf("unsigned repo add to a signed repository: exit %d, %q", code, stderr)
	}
	if after, _ := r.files(); !bytes.Equal(after, before) {
		t.Error("the refused repo add changed the index")
	}
	out, _ := pub.ok("repo", "add", r.dir, archive, "--name", "extra", "--version", "1.0", "--key", r.key, "--expires", "1h")
	if !strings.Contains(out, "signed "+r.dir+": repository demo, version 2, expires ") || !strings.Contains(out, r.pub) {
		t.Errorf("repo add --key: %q", out)
	}
	if out, _ := e.ok(append(trusted, "install", "extra")...); !strings.Contains(out, "installed extra 1.0") {
		t.Errorf("install from the index repo add signed: %q", out)
	}
	if _, stderr, code := pub.pkg("repo", "sign", r.dir, "--key", r.key, "--expires", "-1h"); code != 2 {
		t.Errorf("repo sign --expires -1h: exit %d, %q", code, stderr)
	}
	if err := os.Chmod(r.key, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr := pub.ok("repo", "sign", r.dir, "--key", r.key); !strings.Contains(stderr, "pkg: warning: signing key "+r.key+" can be read by others (mode 0644)") {
		t.Errorf("repo sign with a key others can read: %q", stderr)
	}
	os.Chmod(r.key, 0o600)

	r.put(before, nil)
	r.signWith(bytes.Replace(before, []byte(`"version": 1,`), []byte(`"version": 1, "note": "started over",`), 1))
	if _, stderr, code := e.pkg(append(trusted, "install", "fortunes")...); code != 1 || !strings.Contains(stderr, "older than version 2") ||
		!strings.Contains(stderr, "repo forget") {
		t.Errorf("install from a repository started over: exit %d, %q", code, stderr)
	}
	e.ok("repo", "forget")
	if out, _ := e.ok(append(trusted, "install", "fortunes")...); !strings.Contains(out, "installed fortunes 0.9.1") {
		t.Errorf("install after repo forget: %q", out)
	}
}

// TestRollbackFromMirror: pkg repo forget at a mirror the root has no record of says
// where to forget; at the location the root accepted version 2 from, it says what it
// forgot. Session's TestRollbackFromMirror has the refusal.
func TestRollbackFromMirror(t *testing.T) {
	r := newSignedRepo(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	if err := os.CopyFS(mirror, os.DirFS(r.dir)); err != nil { // version 1
		t.Fatal(err)
	}
	r.sign() // version 2
	e, trusted := r.user()
	e.ok(append(trusted, "install", "libgreet")...)
	e.repo = mirror
	if _, stderr := e.ok("repo", "forget"); !strings.Contains(stderr, "the root has no record of file://"+mirror+"/") {
		t.Errorf("repo forget at the mirror: %q", stderr)
	}
	e.repo = r.url
	if out, _ := e.ok("repo", "forget"); !strings.Contains(out, "forgot version 2 of repository demo, accepted from "+r.url+"/\n") {
		t.Errorf("repo forget: %q", out)
	}
}

// TestLockSigned checks the line a lockfile records of a signed index, and the advice of
// two refusals: locking without the key, and a sync requiring signatures of a lockfile
// made without it. Session's TestLockSigned has each refusal.
func TestLockSigned(t *testing.T) {
	r := newSignedRepo(t)
	r.sign() // version 2
	e, trusted := r.user()
	lock := filepath.Join(t.TempDir(), "pkg.lock")
	e.ok(append(trusted, "lock", "-o", lock, "hello")...)
	data, _ := os.ReadFile(lock)
	if want := `"index": {"name":"demo","version":2,"keys":["` + keyID(t, r.pub) + `"]},`; !strings.Contains(string(data), want) {
		t.Errorf("lockfile:\n%s\nwant the line %s", data, want)
	}
	if _, stderr, code := e.pkg("--cache", t.TempDir(), "lock", "-o", lock); code != 1 || !strings.Contains(stderr, "this index is not verified\npkg: hint: pass the publisher's key with --trusted-key") {
		t.Errorf("lock without the key: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(lock); !bytes.Equal(after, data) {
		t.Error("a refused lock changed the lockfile")
	}
	unsigned := filepath.Join(t.TempDir(), "unsigned.lock")
	e.ok("--cache", t.TempDir(), "lock", "-o", unsigned, "hello")
	_, stderr, code := e.pkg("--require-signed", "sync", "-f", unsigned)
	if code != 1 || !strings.Contains(stderr, unsigned+" does not say it was made from a verified index, and signatures are required\npkg: hint: lock it again with the publisher's key ('"+e.cmd("--require-signed lock --trusted-key KEY")+"'") {
		t.Errorf("sync --require-signed of a lockfile made without the key: exit %d, %q", code, stderr)
	}
}

// TestTrustCommands checks what pkg trust add, list and remove say, and their usage
// errors. Session's TestTrustPins has what trusting and distrusting do to installs.
func TestTrustCommands(t *testing.T) {
	r := newSignedRepo(t)
	e, _ := r.user()
	id := keyID(t, r.pub)
	keys := filepath.Join(e.root, ".pkg", "trusted-keys")
	if out, _ := e.ok("trust", "add", r.pub, "--repo-name", "demo"); out != "root "+e.root+" trusts key "+id+" for repository demo only\n" {
		t.Errorf("trust add: %q", out)
	}
	if out, _ := e.ok("trust", "add", r.pub); !strings.HasSuffix(out, " trusts key "+id+" for any repository (was for repository demo only)\n") {
		t.Errorf("trust add again, for any repository: %q", out)
	}
	e.ok("install", "hello")
	out, _ := e.ok("trust", "list")
	for _, want := range []string{
		"key " + id + " for any repository: " + r.pub + " (" + keys + ")\n",
		"pinned " + r.url + "/: repository demo, version 1, to key " + id + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trust list:\n%s\nlacks %q", out, want)
		}
	}
	out, stderr := e.ok("trust", "remove", id)
	if !strings.Contains(out, "root "+e.root+" no longer trusts key "+id+" for any repository\n") ||
		!strings.Contains(stderr, "pkg: warning: repository "+r.url+"/ (demo) stays pinned, to no key now") {
		t.Errorf("trust remove: stdout %q, stderr %q", out, stderr)
	}
	if _, stderr, code := e.pkg("trust", "remove", id); code != 1 || !strings.Contains(stderr, "does not trust key "+id) {
		t.Errorf("trust remove of a key not trusted: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.pkg("trust", "remove", "nonsense"); code != 2 {
		t.Errorf("trust remove nonsense: exit %d, %q", code, stderr)
	}
	if _, stderr, code := e.pkg("trust", "add", "demo="+r.pub, "--repo-name", "other"); code != 2 {
		t.Errorf("trust add with two names: exit %d, %q", code, stderr)
	}
	e.ok("repo", "forget")
	if out, _ := e.ok("trust", "list"); strings.Contains(out, "pinned") {
		t.Errorf("trust list after repo forget:\n%s", out)
	}
}

// TestPinEveryCommand installs from the signed repository with its key, then, without
// it, has every command that reads the index read a tampered one: each refuses it, naming
// the pin. Session's TestPinEveryCall has the calls they make, and the lockfile refused.
func TestPinEveryCommand(t *testing.T) {
	r := newSignedRepo(t)
	e, trusted := r.user()
	e.ok(append(trusted, "install", "libgreet")...)
	index, sig := r.files()
	r.put(bytes.Replace(index, []byte(indexSHA(t, "hello")), []byte(strings.Repeat("0", 64)), 1), sig)
	for _, args := range [][]string{
		{"search"}, {"fetch", "hello"}, {"lock", "-o", filepath.Join(t.TempDir(), "pkg.lock"), "hello"}, {"upgrade"}, {"install", "hello"},
	} {
		_, stderr, code := e.pkg(args...)
		if code != 1 || !strings.Contains(stderr, "bad signature") || !strings.Contains(stderr, "pinned repository demo to key "+keyID(t, r.pub)) {
			t.Errorf("%v without the key: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}

// TestTrustedKeyOnce names a key trusted by every source at once (--trusted-key,
// PKG_TRUSTED_KEYS, the root's trusted-keys, the root's pin) once in the refusal of an
// index signed by another key.
func TestTrustedKeyOnce(t *testing.T) {
	r := newSignedRepo(t)
	e, trusted := r.user()
	id := keyID(t, r.pub)
	e.ok(append(trusted, "install", "libgreet")...) // pins demo to the key
	e.ok("trust", "add", r.pub)
	t.Setenv("PKG_TRUSTED_KEYS", "demo="+r.pub)
	other := filepath.Join(t.TempDir(), "other")
	r.publisher().ok("repo", "keygen", "-o", other)
	r.publisher().ok("repo", "sign", r.dir, "--key", other)
	_, stderr, code := e.pkg(append(trusted, "install", "hello")...)
	if code != 1 || !strings.Contains(stderr, "(trusted: "+id+")") {
		t.Errorf("install of an index signed by another key: exit %d, want key %s listed once:\n%s", code, id, stderr)
	}
}

// TestTrustRemoveLocationNotALine: a repository left pinned to no key by pkg trust remove
// is named as its location is, whatever that holds: a location holding "'pkg verify " is
// neither given the command line's options nor read as advice.
func TestTrustRemoveLocationNotALine(t *testing.T) {
	r := newSignedRepo(t)
	e, _ := r.user()
	id := keyID(t, r.pub)
	e.ok("trust", "add", r.pub)
	e.ok("install", "hello")
	loc := "https://example.com/x'pkg verify y/"
	d, err := db.Open(filepath.Join(e.root, ".pkg", "db"), db.Options{NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	pins, err := d.Repos()
	if err == nil && len(pins) == 1 {
		pin := pins[0]
		pin.Location, pin.Name = loc, "other"
		err = d.PutRepo(pin)
	} else if err == nil {
		err = fmt.Errorf("%d pins, want 1", len(pins))
	}
	if err != nil {
		t.Fatal(err)
	}
	_, stderr := e.ok("trust", "remove", id)
	for _, want := range []string{
		"pkg: warning: repository " + loc + " (other) stays pinned, to no key now: its indexes are refused until you trust its publisher's key ('" + e.cmd("trust add KEY") + "')",
		"--repo " + shell.Quote(loc) + " repo forget')\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("trust remove:\n%s\nlacks %q", stderr, want)
		}
	}
}
