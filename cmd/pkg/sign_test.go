package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pkg/internal/testfs"

	"pkg/db"
	"pkg/repo"
	"pkg/trust"
)

// signedRepo is a copy of the demo repository, signed as repository "demo" with a key
// made by pkg repo keygen, served over HTTP.
type signedRepo struct {
	t    *testing.T
	dir  string
	url  string
	key  string      // the signing key file
	pub  string      // its public key, as keygen printed it
	huge atomic.Bool // serve an index.json over the size limit instead
	puts int         // indexes published by put
}

func newSignedRepo(t *testing.T) *signedRepo {
	t.Helper()
	r := &signedRepo{t: t, dir: filepath.Join(t.TempDir(), "demo"), key: filepath.Join(t.TempDir(), "key")}
	if err := os.CopyFS(r.dir, os.DirFS(demoRepo)); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(r.dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.huge.Load() && req.URL.Path == "/index.json" {
			writeHuge(w)
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	out, _ := r.publisher().ok("repo", "keygen", "-o", r.key)
	r.pub = strings.TrimSpace(out)
	r.sign()
	return r
}

// writeHuge writes an index one byte over the limit, without declaring its length.
func writeHuge(w http.ResponseWriter) {
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for n := 0; n <= repo.MaxIndexSize; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
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

// signExpiring signs the repository, as pkg repo sign does, to expire at expires.
func (r *signedRepo) signExpiring(expires time.Time) *repo.Index {
	r.t.Helper()
	k, err := trust.ReadKeyFile(r.key)
	if err != nil {
		r.t.Fatal(err)
	}
	ix, err := repo.Sign(r.dir, &repo.Signer{Expires: expires, Sign: func(b []byte) []byte { return trust.Sign(b, k) }})
	if err != nil {
		r.t.Fatal(err)
	}
	return ix
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

// TestSignedRefusals accepts the signed repository in a root, then has the repository
// (or a mirror or proxy) serve each index the user must refuse: the error names the
// repository and the cause, with a hint, and neither the root, its database nor the
// cache changes. Once the good index is back, the install goes through.
func TestSignedRefusals(t *testing.T) {
	r := newSignedRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	otherPub, _ := r.publisher().ok("repo", "keygen", "-o", other)
	var older []byte // the index before the latest signing, for rollback
	var olderSig []byte
	tests := []struct {
		name   string
		setup  func()   // before the root accepts the repository
		serve  func()   // then the repository changes so
		flags  []string // the user's global flags for the refused install; nil: trust the key
		errors []string // in stderr
	}{{
		name:   "wrong key",
		serve:  func() { r.publisher().ok("repo", "sign", r.dir, "--key", other) },
		errors: []string{"is signed by key " + keyID(t, otherPub) + ", which is not trusted"},
	}, {
		name: "bad signature",
		serve: func() {
			index, sig := r.files()
			i := bytes.LastIndexByte(sig, ' ') + 1
			// Another base64 letter in the first place: another 64-byte signature. (XOR with a
			// fixed mask made a non-base64 byte of some signatures, a different refusal.)
			if sig[i] == 'A' {
				sig[i] = 'B'
			} else {
				sig[i] = 'A'
			}
			r.put(index, sig)
		},
		errors: []string{"bad signature", "does not match index.json"},
	}, {
		name: "tampered index",
		serve: func() {
			index, sig := r.files()
			r.put(bytes.Replace(index, []byte(indexSHA(t, "hello")), []byte(strings.Repeat("0", 64)), 1), sig)
		},
		errors: []string{"bad signature: the signature by key " + keyID(t, r.pub) + " does not match index.json"},
	}, {
		name:   "expired",
		serve:  func() { r.signExpiring(time.Now().Add(-time.Hour)) },
		errors: []string{"index version 2 expired at "},
	}, {
		name: "rollback",
		setup: func() {
			older, olderSig = r.files()
			r.sign()
		},
		serve:  func() { r.put(older, olderSig) },
		errors: []string{"index version 1 is older than version 2, accepted before"},
	}, {
		name: "same version, other bytes",
		serve: func() {
			index, _ := r.files()
			r.signWith(bytes.Replace(index, []byte(`"says hello"`), []byte(`"says hi"`), 1))
		},
		errors: []string{"index version 1 differs from the version 1 accepted before"},
	}, {
		name:   "another repository's index",
		serve:  func() { r.sign("--name", "other") },
		errors: []string{`index is for repository "other", but this location served repository "demo" before`},
	}, {
		name:   "oversized index",
		serve:  func() { r.huge.Store(true) },
		errors: []string{"index.json is over the 67108864-byte limit"},
	}, {
		name: "signature removed",
		serve: func() {
			index, _ := r.files()
			r.put(index, nil)
		},
		errors: []string{"index is not signed (no index.json.sig), but keys are trusted for it"},
	}, {
		name: "missing signature with --require-signed",
		serve: func() {
			index, _ := r.files()
			r.put(index, nil)
		},
		flags:  []string{"--require-signed"},
		errors: []string{"index is not signed (no index.json.sig), but keys are trusted for it", "pinned repository demo to key " + keyID(t, r.pub)},
	}, {
		// The root pinned the repository to the key that verified its index: without the
		// key given, each of these is refused as it is with the key.
		name: "tampered index, no key given",
		serve: func() {
			index, sig := r.files()
			r.put(bytes.Replace(index, []byte(indexSHA(t, "hello")), []byte(strings.Repeat("0", 64)), 1), sig)
		},
		flags: []string{},
		errors: []string{"bad signature: the signature by key " + keyID(t, r.pub) + " does not match index.json",
			"(root ", "/root pinned repository demo to key " + keyID(t, r.pub) + " when it accepted its index version 1)"},
	}, {
		name:   "signed by an untrusted key, no key given",
		serve:  func() { r.publisher().ok("repo", "sign", r.dir, "--key", other) },
		flags:  []string{},
		errors: []string{"is signed by key " + keyID(t, otherPub) + ", which is not trusted", "pinned repository demo", "pkg: hint: once pkg accepted a signed index", "'pkg trust add KEY'", "'pkg repo forget' unpins it"},
	}, {
		name: "signature removed, no key given",
		serve: func() {
			index, _ := r.files()
			r.put(index, nil)
		},
		flags:  []string{},
		errors: []string{"index is not signed (no index.json.sig)", "pinned repository demo", "'pkg trust add KEY'"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, startSig := r.files()
			defer r.put(start, startSig)
			if tt.setup != nil {
				tt.setup()
			}
			good, goodSig := r.files()
			e, trusted := r.user()
			e.ok(append(trusted, "install", "libgreet")...)
			root, cache, state := rootTree(t, e.root), testfs.Tree(t, e.cache), dbState(t, e)

			tt.serve()
			flags := tt.flags
			if flags == nil {
				flags = trusted
			}
			_, stderr, code := e.pkg(append(flags, "install", "hello")...)
			t.Logf("refused:\n%s", stderr)
			if code != 1 || !strings.Contains(stderr, r.url) || !strings.Contains(stderr, "\npkg: hint: ") && tt.name != "oversized index" {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1, the repository's URL and a hint", code, stderr)
			}
			for _, want := range tt.errors {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			testfs.SameTree(t, "root", rootTree(t, e.root), root)
			testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
			if got := dbState(t, e); got != state {
				t.Errorf("database changed:\n%s\nwas\n%s", got, state)
			}

			r.huge.Store(false)
			r.put(good, goodSig)
			if out, _ := e.ok(append(trusted, "install", "hello")...); !strings.Contains(out, "installed hello 1.2.0") {
				t.Errorf("install with the good index: %q", out)
			}
		})
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

// TestSignedTamperedArchive changes an archive of a signed repository, not its index:
// the index verifies, and the archive fails on its sha256.
func TestSignedTamperedArchive(t *testing.T) {
	r := newSignedRepo(t)
	archive := filepath.Join(r.dir, "hello-1.2.0.tar.zst")
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(archive, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e, trusted := r.user()
	_, stderr, code := e.pkg(append(trusted, "install", "hello")...)
	if code != 1 || !strings.Contains(stderr, "hello 1.2.0") || !strings.Contains(stderr, "sha256 mismatch") || strings.Contains(stderr, "trust:") {
		t.Errorf("install of a tampered archive: exit %d, stderr:\n%s", code, stderr)
	}
	if ps := e.list(); len(ps) != 0 {
		t.Errorf("installed %+v", ps)
	}
}

// TestSignedVerified installs from the signed repository with its key trusted in each
// way, without a warning, and records the index in the root.
func TestSignedVerified(t *testing.T) {
	r := newSignedRepo(t)
	e, trusted := r.user()
	_, stderr := e.ok(append(trusted, "install", "hello")...)
	if strings.Contains(stderr, "warning") {
		t.Errorf("verified install warns:\n%s", stderr)
	}
	if got := dbState(t, e); !strings.Contains(got, "repository true {Location:"+r.url+"/ Name:demo Version:1 SHA256:") {
		t.Errorf("database: %s", got)
	}
	// Without the key, the root that accepted the signed index verifies the next one with
	// the key it pinned the repository to.
	for _, args := range [][]string{{"install", "fortunes"}, {"search", "hello"}, {"upgrade"}} {
		if _, stderr := e.ok(args...); strings.Contains(stderr, "warning") {
			t.Errorf("%v without the key after a signed install warns:\n%s", args, stderr)
		}
	}
	_, stderr, code := newEnv(t, t.TempDir(), r.url).pkg("--trusted-key", "main="+r.pub, "search")
	if want := `index is for repository "demo", but key ` + keyID(t, r.pub) + ` is trusted only for repository "main"`; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("search with the key bound to another repository: exit %d, %q; want %q", code, stderr, want)
	}

	env := newEnv(t, t.TempDir(), r.url)
	other, _ := r.publisher().ok("repo", "keygen", "-o", filepath.Join(t.TempDir(), "other"))
	t.Setenv("PKG_TRUSTED_KEYS", strings.TrimSpace(other)+", demo="+r.pub)
	if _, stderr := env.ok("search", "hello"); stderr != "" {
		t.Errorf("PKG_TRUSTED_KEYS: stderr %q", stderr)
	}
	t.Setenv("PKG_TRUSTED_KEYS", "")

	file := newEnv(t, t.TempDir(), r.url)
	if err := os.MkdirAll(filepath.Join(file.root, ".pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	keys := "# publishers\n" + strings.TrimSpace(other) + "\ndemo=" + r.pub + "  # the demo repository\n"
	if err := os.WriteFile(filepath.Join(file.root, ".pkg", "trusted-keys"), []byte(keys), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr := file.ok("--require-signed", "install", "hello"); strings.Contains(stderr, "warning") {
		t.Errorf("trusted-keys file: stderr %q", stderr)
	}
	_, stderr, code = file.pkg("--trusted-key", "pkg-ed25519:nonsense", "search")
	if code != 2 || !strings.Contains(stderr, "--trusted-key") {
		t.Errorf("a malformed --trusted-key: exit %d, %q", code, stderr)
	}
}

// TestUnverifiedWarning warns once per command, even under --quiet, about an unsigned
// repository and about a signed one whose key is not trusted; --require-signed and
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
		{untrusted, "pkg: warning: repository " + r.url + "/ is signed by key " + keyID(t, r.pub) + ", but no key is trusted for it, so its index is not verified; trust the publisher's key with 'pkg trust add KEY'"},
	} {
		_, stderr := tt.e.ok("--quiet", "install", "hello")
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

// TestSignedOfflineExpired installs offline from the last verified index after it has
// expired, with a warning naming the expiry, which --quiet does not hide.
func TestSignedOfflineExpired(t *testing.T) {
	r := newSignedRepo(t)
	ix := r.signExpiring(time.Now().Add(2 * time.Second))
	e, trusted := r.user()
	e.ok(append(trusted, "fetch", "hello")...)
	time.Sleep(time.Until(ix.Expires) + 50*time.Millisecond)
	out, stderr := e.ok(append(trusted, "--offline", "--quiet", "install", "hello")...)
	want := "pkg: warning: repository " + r.url + "/: offline, using the last verified index (version 2), which expired at " +
		ix.Expires.UTC().Format(time.RFC3339)
	if out != "" || !strings.Contains(stderr, want) {
		t.Errorf("offline install of an expired index: stdout %q, stderr:\n%s\nwant %q", out, stderr, want)
	}
	if _, stderr, code := e.pkg(append(trusted, "install", "fortunes")...); code != 1 || !strings.Contains(stderr, "expired at") {
		t.Errorf("online install of an expired index: exit %d, %q", code, stderr)
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
	if _, stderr, code := pub.pkg("repo", "keygen", "-o", r.key); code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("keygen over an existing key: exit %d, %q", code, stderr)
	}
	e, trusted := r.user()
	e.ok(append(trusted, "install", "hello")...)
	before, _ := r.files()

	archive := filepath.Join(t.TempDir(), "extra-1.0.tar.gz")
	if err := os.Link(filepath.Join(demoRepo, "libgreet-1.0.0.tar.gz"), archive); err != nil {
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

// TestRollbackFromMirror accepts version 2 of the signed repository, then installs from a
// mirror (another location) that serves version 1, signed by the same key: refused, naming
// the location version 2 came from, and nothing changes.
func TestRollbackFromMirror(t *testing.T) {
	r := newSignedRepo(t)
	mirror := filepath.Join(t.TempDir(), "mirror")
	if err := os.CopyFS(mirror, os.DirFS(r.dir)); err != nil { // version 1
		t.Fatal(err)
	}
	r.sign() // version 2
	e, trusted := r.user()
	e.ok(append(trusted, "install", "libgreet")...)
	before := dbState(t, e)

	e.repo = mirror
	_, stderr, code := e.pkg(append(trusted, "install", "fortunes")...)
	if want := "index version 1 is older than version 2, accepted before from " + r.url + "/"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("install from a mirror serving version 1: exit %d, %q; want %q", code, stderr, want)
	}
	e.repo = r.url
	if got := dbState(t, e); got != before {
		t.Errorf("database after the refusal:\n%s\nwant\n%s", got, before)
	}

	// The publisher started over at the mirror. The root has no record of the mirror, and
	// says where to forget; forgetting the location the error named lets the mirror in.
	e.repo = mirror
	if _, stderr := e.ok("repo", "forget"); !strings.Contains(stderr, "the root has no record of file://"+mirror+"/") {
		t.Errorf("repo forget at the mirror: %q", stderr)
	}
	e.repo = r.url
	if out, _ := e.ok("repo", "forget"); !strings.Contains(out, "forgot version 2 of repository demo, accepted from "+r.url+"/\n") {
		t.Errorf("repo forget: %q", out)
	}
	e.repo = mirror
	e.ok(append(trusted, "install", "fortunes")...)
}

// TestLockSigned checks what a lockfile records of a signed index, and what it refuses:
// locking again against an older or unverified index of the repository, and a sync that
// requires signatures of a lockfile no trusted key vouches for.
func TestLockSigned(t *testing.T) {
	r := newSignedRepo(t)
	v1, sig1 := r.files()
	r.sign() // version 2
	e, trusted := r.user()
	lock := filepath.Join(t.TempDir(), "pkg.lock")
	e.ok(append(trusted, "lock", "-o", lock, "hello")...)
	data, _ := os.ReadFile(lock)
	if want := `"index": {"name":"demo","version":2,"keys":["` + keyID(t, r.pub) + `"]},`; !strings.Contains(string(data), want) {
		t.Errorf("lockfile:\n%s\nwant the line %s", data, want)
	}

	// A mirror serves version 1 to a runner with a cold cache.
	r.put(v1, sig1)
	_, stderr, code := e.pkg(append(trusted, "--cache", t.TempDir(), "lock", "-o", lock)...)
	if want := "index version 1 of repository demo is older than version 2, which " + lock + " was made from"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("lock against version 1: exit %d, %q; want %q", code, stderr, want)
	}
	if _, stderr, code := e.pkg("--cache", t.TempDir(), "lock", "-o", lock); code != 1 || !strings.Contains(stderr, "this index is not verified\npkg: hint: pass the publisher's key with --trusted-key") {
		t.Errorf("lock without the key: exit %d, %q", code, stderr)
	}
	// The cache's copy was verified by the key: without it, the index is refused outright.
	if _, stderr, code := e.pkg("lock", "-o", lock); code != 1 || !strings.Contains(stderr, "but the cache's copy of its index (version 2) was verified by key "+keyID(t, r.pub)) ||
		!strings.Contains(stderr, "pkg: hint: once pkg accepted a signed index") {
		t.Errorf("lock without the key, the cache's copy verified: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(lock); !bytes.Equal(after, data) {
		t.Error("a refused lock changed the lockfile")
	}

	e.ok(append(trusted, "sync", "-f", lock)...)
	unsigned := filepath.Join(t.TempDir(), "unsigned.lock")
	e.ok("--cache", t.TempDir(), "lock", "-o", unsigned, "hello")
	_, stderr, code = e.pkg("--require-signed", "sync", "-f", unsigned)
	if code != 1 || !strings.Contains(stderr, unsigned+" does not say it was made from a verified index, and signatures are required\npkg: hint: lock it again with the publisher's key ('pkg lock --trusted-key KEY'") {
		t.Errorf("sync --require-signed of a lockfile made without the key: exit %d, %q", code, stderr)
	}
	// With a trusted key, signatures are required too.
	_, stderr, code = e.pkg(append(trusted, "sync", "-f", unsigned)...)
	if code != 1 || !strings.Contains(stderr, "pkg: "+unsigned+" does not say it was made from a verified index, and a key is trusted here") {
		t.Errorf("sync with a key of a lockfile made without it: exit %d, %q", code, stderr)
	}
	if out, _ := e.ok(append(trusted, "--cache", t.TempDir(), "lock", "-o", unsigned)...); !strings.HasPrefix(out, "recorded index demo version 1, verified by key "+keyID(t, r.pub)+"\n") {
		t.Errorf("lock with the key of a lockfile made without it: %q", out)
	}
	other, _ := newEnv(t, t.TempDir(), r.dir).ok("repo", "keygen", "-o", filepath.Join(t.TempDir(), "other.key"))
	_, stderr, code = e.pkg("--trusted-key", strings.TrimSpace(other), "sync", "-f", lock)
	if code != 1 || !strings.Contains(stderr, "none of which is trusted here\npkg: hint: trust one of those keys too ('pkg trust add KEY', or --trusted-key for one command)") {
		t.Errorf("sync of a lockfile verified by another key: exit %d, %q", code, stderr)
	}
}

// TestTrustCommands trusts the publisher's key with pkg trust add, so that installs need no
// flag; lists it and the pin the install made; removes it, which leaves the repository
// pinned to no key, so that even its good index is refused; trusts it again; and unpins
// the repository with pkg repo forget, after which its unsigned index passes with a
// warning. None of the refusals changes the root, the cache or the database.
func TestTrustCommands(t *testing.T) {
	r := newSignedRepo(t)
	e, _ := r.user()
	id := keyID(t, r.pub)
	keys := filepath.Join(e.root, ".pkg", "trusted-keys")
	if out, _ := e.ok("trust", "add", r.pub, "--repo-name", "demo"); out != "root "+e.root+" trusts key "+id+" for repository demo only\n" {
		t.Errorf("trust add: %q", out)
	}
	if data, _ := os.ReadFile(keys); string(data) != "demo="+r.pub+"\n" {
		t.Errorf("trusted-keys after trust add: %q", data)
	}
	if out, _ := e.ok("trust", "add", r.pub); !strings.HasSuffix(out, " trusts key "+id+" for any repository (was for repository demo only)\n") {
		t.Errorf("trust add again, for any repository: %q", out)
	}
	if _, stderr := e.ok("install", "hello"); strings.Contains(stderr, "warning") {
		t.Errorf("install with the key trust add trusted warns:\n%s", stderr)
	}
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
	if data, _ := os.ReadFile(keys); len(data) != 0 {
		t.Errorf("trusted-keys after trust remove: %q", data)
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
	refused := func(what string, wants ...string) {
		t.Helper()
		root, cache, state := rootTree(t, e.root), testfs.Tree(t, e.cache), dbState(t, e)
		_, stderr, code := e.pkg("install", "fortunes")
		if code != 1 {
			t.Errorf("%s: exit %d, stderr:\n%s", what, code, stderr)
		}
		for _, want := range wants {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, want, stderr)
			}
		}
		testfs.SameTree(t, "root", rootTree(t, e.root), root)
		testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
		if got := dbState(t, e); got != state {
			t.Errorf("%s: database changed:\n%s\nwas\n%s", what, got, state)
		}
	}
	refused("the good index, its key removed", "pinned repository demo when it accepted its index version 1", "'pkg trust add KEY'")

	e.ok("trust", "add", r.pub)
	index, _ := r.files()
	r.put(index, nil)
	refused("the index unsigned", "index is not signed", "pinned repository demo when")

	if out, _ := e.ok("repo", "forget"); !strings.Contains(out, "forgot version 1 of repository demo") {
		t.Errorf("repo forget: %q", out)
	}
	if out, _ := e.ok("trust", "list"); strings.Contains(out, "pinned") {
		t.Errorf("trust list after repo forget:\n%s", out)
	}
	e.ok("trust", "remove", id)
	_, stderr = e.ok("install", "fortunes")
	if !strings.Contains(stderr, "pkg: warning: repository "+r.url+"/ is not signed; pkg cannot tell whether its packages are the publisher's; --require-signed refuses such repositories; once the publisher signs it, trust their key with 'pkg trust add KEY'\n") {
		t.Errorf("install of the unsigned index after repo forget:\n%s", stderr)
	}
}

// TestPinEveryCommand installs from the signed repository with its key, then, without
// it, has every command that reads the index read a tampered one: each refuses it, naming
// the pin, and sync refuses a lockfile made without the key.
func TestPinEveryCommand(t *testing.T) {
	r := newSignedRepo(t)
	e, trusted := r.user()
	e.ok(append(trusted, "install", "libgreet")...)
	unsigned := filepath.Join(t.TempDir(), "unsigned.lock")
	newEnv(t, t.TempDir(), r.url).ok("lock", "-o", unsigned, "hello")
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
	_, stderr, code := e.pkg("sync", "-f", unsigned, "--keep-extra")
	if want := unsigned + " does not say it was made from a verified index, and root " + e.root + " pinned repository demo to key " + keyID(t, r.pub); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("sync of a lockfile made without the key: exit %d, %q; want %q", code, stderr, want)
	}
}
