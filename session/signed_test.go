package session_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pkg/config"
	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/session"
	"pkg/trust"
	"pkg/txn"
)

// signedUser returns the options of a user of the signed repository r in a root and cache
// of their own, given r's key (none if !keyed).
func signedUser(t *testing.T, r *testrepo.Signed, keyed bool) session.Options {
	base := t.TempDir()
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"),
		Repos: []config.Repo{{Name: "demo", URLs: []string{r.URL}}}, Jobs: 2}
	if keyed {
		o.Keys = []trust.KeySource{{Name: "given", Keys: []trust.PublicKey{r.Key.Public()}}}
	}
	return o
}

func newKey(t *testing.T) trust.PrivateKey {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignedRefusals accepts the signed repository in a root, then has the repository
// (or a mirror or proxy) serve each index the user must refuse: the error is of the
// kind, names the repository and, where the root pinned the repository, the pin, and
// neither the root, its database nor the cache changes. Once the good index is back, the
// install goes through.
func TestSignedRefusals(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"libgreet", "1"}, [2]string{"hello", "1"})
	other := newKey(t)
	var older, olderSig []byte // the index before the latest signing, for rollback
	tamper := func() {
		index, sig := r.Files()
		r.Put(bytes.Replace(index, []byte(`"hello"`), []byte(`"hellp"`), 1), sig)
	}
	unsign := func() {
		index, _ := r.Files()
		r.Put(index, nil)
	}
	tests := []struct {
		name     string
		setup    func()   // before the root accepts the repository
		serve    func()   // then the repository changes so
		unkeyed  bool     // the refused install is given no key
		require  bool     // and requires signatures
		want     error    // what errors.Is finds; nil: see tooLarge
		tooLarge bool     // the error is a *fetch.TooLargeError of index.json
		keys     []string // the keys the *trust.Error names
		version  uint64   // the index version it names
		repoName string   // the repository name it names
		pinRefus bool     // a refusal session.PinRefused names (the commands advise on the pin)
	}{{
		name:  "wrong key",
		serve: func() { index, _ := r.Files(); r.SignWith(index, other) },
		want:  trust.ErrUntrusted, keys: []string{other.Public().ID()}, pinRefus: true,
	}, {
		name: "bad signature",
		serve: func() {
			index, sig := r.Files()
			i := bytes.LastIndexByte(sig, ' ') + 1
			// Another base64 letter in the first place: another 64-byte signature.
			if sig[i] == 'A' {
				sig[i] = 'B'
			} else {
				sig[i] = 'A'
			}
			r.Put(index, sig)
		},
		want: trust.ErrBadSignature, keys: []string{r.Key.Public().ID()},
	}, {
		name:  "tampered index",
		serve: tamper,
		want:  trust.ErrBadSignature, keys: []string{r.Key.Public().ID()},
	}, {
		name:  "expired",
		serve: func() { r.Sign(-time.Hour, "") },
		want:  trust.ErrExpired, version: 2, repoName: "demo",
	}, {
		name:  "rollback",
		setup: func() { older, olderSig = r.Files(); r.Sign(time.Hour, "") },
		serve: func() { r.Put(older, olderSig) },
		want:  trust.ErrRollback, version: 1, repoName: "demo",
	}, {
		name: "same version, other bytes",
		serve: func() {
			index, _ := r.Files()
			r.SignWith(bytes.Replace(index, []byte(`"hello"`), []byte(`"hellp"`), 1), r.Key)
		},
		want: trust.ErrReused, version: 1, repoName: "demo",
	}, {
		name:  "another repository's index",
		serve: func() { r.Sign(time.Hour, "other") },
		want:  trust.ErrWrongName, version: 2, repoName: "other",
	}, {
		name:     "oversized index",
		serve:    func() { r.Huge.Store(true) },
		tooLarge: true,
	}, {
		name:  "signature removed",
		serve: unsign,
		want:  trust.ErrUnsigned, pinRefus: true,
	}, {
		name:    "signature removed, signatures required",
		serve:   unsign,
		require: true,
		want:    trust.ErrUnsigned, pinRefus: true,
	}, {
		// The root pinned the repository to the key that verified its index: without the
		// key given, each of these is refused as it is with the key.
		name:    "tampered index, no key given",
		serve:   tamper,
		unkeyed: true,
		want:    trust.ErrBadSignature, keys: []string{r.Key.Public().ID()},
	}, {
		name:    "signed by an untrusted key, no key given",
		serve:   func() { index, _ := r.Files(); r.SignWith(index, other) },
		unkeyed: true,
		want:    trust.ErrUntrusted, keys: []string{other.Public().ID()}, pinRefus: true,
	}, {
		name:    "signature removed, no key given",
		serve:   unsign,
		unkeyed: true,
		want:    trust.ErrUnsigned, pinRefus: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, startSig := r.Files()
			defer r.Put(start, startSig)
			if tt.setup != nil {
				tt.setup()
			}
			good, goodSig := r.Files()
			o := signedUser(t, r, true)
			if _, err := installWith(t, o, "libgreet"); err != nil {
				t.Fatal(err)
			}
			was := stateOf(t, o)

			tt.serve()
			refused := o
			if tt.unkeyed {
				refused.Keys = nil
			}
			refused.RequireSigned = tt.require
			_, err := installWith(t, refused, "hello")
			t.Logf("refused: %v", err)
			var pe *trust.PinnedError
			var tl *fetch.TooLargeError
			var te *trust.Error
			switch {
			case err == nil:
				t.Fatal("installed")
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Errorf("error is not %v", tt.want)
			case tt.tooLarge && (!errors.As(err, &tl) || tl.Name != "index.json" || tl.Limit != repo.MaxIndexSize || tl.URL != r.URL+"/index.json"):
				t.Errorf("error is not a *fetch.TooLargeError of %s/index.json and its limit: %#v", r.URL, tl)
			case tt.want != nil && (!errors.As(err, &pe) || pe.Root != o.Root || pe.Name != "demo" || pe.Version != 1 && tt.setup == nil ||
				!slices.Equal(pe.KeyIDs, []string{r.Key.Public().ID()})):
				t.Errorf("error is not a *trust.PinnedError of the root's pin to %s: %+v", r.Key.Public().ID(), pe)
			case tt.want != nil && (!errors.As(err, &te) || te.Repo != r.URL+"/" || !slices.Equal(te.KeyIDs, tt.keys) || te.Version != tt.version || te.Name != tt.repoName):
				t.Errorf("error is not a *trust.Error of %s/ naming keys %q, version %d, name %q: %+v", r.URL, tt.keys, tt.version, tt.repoName, te)
			case session.PinRefused(err) != tt.pinRefus:
				t.Errorf("PinRefused = %v, want %v", !tt.pinRefus, tt.pinRefus)
			}
			was.same(t, stateOf(t, o))

			r.Huge.Store(false)
			r.Put(good, goodSig)
			if _, err := installWith(t, o, "hello"); err != nil {
				t.Errorf("install with the good index: %v", err)
			}
		})
	}
}

// told reports whether the observer was told anything but notes: a warning, or of an
// index used unverified.
func told(obs *recorder) []string {
	var out []string
	for _, l := range obs.lines {
		if strings.HasPrefix(l, "warning: ") || strings.HasPrefix(l, "unverified ") {
			out = append(out, l)
		}
	}
	return out
}

// TestSignedVerified installs from the signed repository with its key, in silence, and
// records the index in the root; without the key, the root verifies the next index with
// the key it pinned the repository to, also in silence. A key bound to another
// repository's name does not verify it; one in the root's trusted-keys file does.
func TestSignedVerified(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"}, [2]string{"tool", "1"})
	o := signedUser(t, r, true)
	obs, err := installWith(t, o, "hello")
	if err != nil || told(obs) != nil {
		t.Fatalf("verified install: %v, told %q", err, told(obs))
	}
	if got := stateOf(t, o).db; !strings.Contains(got, "repository {Location:"+r.URL+"/ Name:demo Version:1 SHA256:") {
		t.Errorf("database: %s", got)
	}
	unkeyed := o
	unkeyed.Keys = nil
	if obs, err := installWith(t, unkeyed, "tool"); err != nil || told(obs) != nil {
		t.Errorf("install without the key once pinned: %v, told %q", err, told(obs))
	}
	s, obs := newSession(t, unkeyed, "")
	if _, _, err := session.OpenFetcher(s, t.Context(), true); err != nil || told(obs) != nil {
		t.Errorf("OpenFetcher without the key once pinned: %v, told %q", err, told(obs))
	}

	bound := signedUser(t, r, false)
	k := r.Key.Public()
	k.Repo = "main"
	bound.Keys = []trust.KeySource{{Name: "given", Keys: []trust.PublicKey{k}}}
	s, _ = newSession(t, bound, "")
	_, _, err = session.OpenFetcher(s, t.Context(), true)
	if te := (*trust.Error)(nil); !errors.Is(err, trust.ErrNotBound) || !errors.As(err, &te) || !slices.Equal(te.KeyIDs, []string{k.ID()}) || te.Name != "demo" {
		t.Errorf("the key bound to another repository: %v; want trust.ErrNotBound naming key %s", err, k.ID())
	}

	file := signedUser(t, r, false)
	file.RequireSigned = true
	keys := "# publishers\n" + newKey(t).Public().String() + "\ndemo=" + r.Key.Public().String() + "  # the demo repository\n"
	if err := os.MkdirAll(filepath.Join(file.Root, ".pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pin.TrustedKeysFile(file.Root), []byte(keys), 0o644); err != nil {
		t.Fatal(err)
	}
	if obs, err := installWith(t, file, "hello"); err != nil || told(obs) != nil {
		t.Errorf("install with the key in the root's trusted-keys file: %v, told %q", err, told(obs))
	}
}

// TestSignedTamperedArchive changes an archive of a signed repository, not its index:
// the index verifies, the archive fails on its sha256, and nothing is installed.
func TestSignedTamperedArchive(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"})
	archives, _ := filepath.Glob(filepath.Join(r.Dir, "hello-1.*"))
	if len(archives) != 1 {
		t.Fatalf("archives of hello 1: %q", archives)
	}
	data, err := os.ReadFile(archives[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(archives[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	o := signedUser(t, r, true)
	_, err = installWith(t, o, "hello")
	if !errors.Is(err, fetch.ErrMismatch) || errors.As(err, new(*trust.Error)) || !strings.Contains(err.Error(), "hello 1") {
		t.Errorf("install of a tampered archive: %v; want fetch.ErrMismatch naming hello 1, no trust error", err)
	}
	if db := stateOf(t, o).db; db != "" {
		t.Errorf("the failed first install left a root: %s", db)
	}
}

// TestSignedOfflineExpired installs offline from the last verified index after it has
// expired, with a warning naming the expiry; online, the expired index is refused.
func TestSignedOfflineExpired(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"}, [2]string{"tool", "1"})
	ix := r.Sign(2*time.Second, "")
	o := signedUser(t, r, true)
	s, _ := newSession(t, o, "")
	if err := s.Fetch(t.Context(), []repo.Requirement{{Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	time.Sleep(time.Until(ix.Expires) + 50*time.Millisecond)
	offline := o
	offline.Offline = true
	obs, err := installWith(t, offline, "hello")
	want := "warning: repository " + r.URL + "/: offline, using the last verified index (version 2), which expired at " + ix.Expires.UTC().Format(time.RFC3339)
	if err != nil || !slices.Contains(obs.lines, want) {
		t.Errorf("offline install of an expired index: %v, told %q; want %q", err, obs.lines, want)
	}
	if _, err := installWith(t, o, "tool"); !errors.Is(err, trust.ErrExpired) {
		t.Errorf("online install of an expired index: %v, want trust.ErrExpired", err)
	}
}

// TestRollbackFromMirror accepts version 2 of the signed repository, then installs from a
// mirror (another location) that serves version 1, signed by the same key: refused,
// naming the location version 2 came from, and nothing changes. Forgetting the mirror
// forgets nothing; forgetting the location the error named lets the mirror in.
func TestRollbackFromMirror(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"libgreet", "1"}, [2]string{"tool", "1"})
	mirror := filepath.Join(t.TempDir(), "mirror")
	if err := os.CopyFS(mirror, os.DirFS(r.Dir)); err != nil { // version 1
		t.Fatal(err)
	}
	r.Sign(time.Hour, "") // version 2
	o := signedUser(t, r, true)
	if _, err := installWith(t, o, "libgreet"); err != nil {
		t.Fatal(err)
	}
	was := stateOf(t, o)
	atMirror := o
	atMirror.Repos = []config.Repo{{Name: "demo", URLs: []string{mirror}}}
	_, err := installWith(t, atMirror, "tool")
	if te := (*trust.Error)(nil); !errors.Is(err, trust.ErrRollback) || !errors.As(err, &te) || te.Repo != "file://"+mirror+"/" || !strings.Contains(err.Error(), r.URL) {
		t.Errorf("install from a mirror serving version 1: %#v; want trust.ErrRollback of %s naming %s", err, mirror, r.URL)
	}
	// The root refuses it before the cache keeps the mirror's index as that location's:
	// the root, the cache and the database are as they were.
	was.same(t, stateOf(t, o))

	s, _ := newSession(t, atMirror, "")
	if f, err := s.Forget(t.Context(), ""); err != nil || !f.InRoot || len(f.Gone) != 0 || f.URL != "file://"+mirror+"/" {
		t.Errorf("Forget at the mirror: %+v, %v; want nothing gone from the root", f, err)
	}
	s, _ = newSession(t, o, "")
	if f, err := s.Forget(t.Context(), ""); err != nil || len(f.Gone) != 1 || f.Gone[0].Location != r.URL+"/" || f.Gone[0].Version != 2 {
		t.Errorf("Forget: %+v, %v; want version 2 from %s/ gone", f, err, r.URL)
	}
	if _, err := installWith(t, atMirror, "tool"); err != nil {
		t.Errorf("install from the mirror once forgotten: %v", err)
	}
}

// TestTrustPins trusts the publisher's key in the root, so that installs need no key
// given; distrusts it, which leaves the repository pinned to no key, so that even its good
// index is refused; trusts it again; and forgets the repository, after which its unsigned
// index passes, told as unverified. None of the refusals changes the root, the cache or
// the database.
func TestTrustPins(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"}, [2]string{"tool", "1"})
	o := signedUser(t, r, false)
	k, id := r.Key.Public(), r.Key.Public().ID()
	s, _ := newSession(t, o, "")
	bound := k
	bound.Repo = "demo"
	if dir, replaced, err := s.Trust(t.Context(), bound); err != nil || dir != o.Root || len(replaced) != 0 {
		t.Fatalf("Trust for demo: %q, %v, %v", dir, replaced, err)
	}
	if data, _ := os.ReadFile(pin.TrustedKeysFile(o.Root)); string(data) != "demo="+k.String()+"\n" {
		t.Errorf("trusted-keys after Trust: %q", data)
	}
	if _, replaced, err := s.Trust(t.Context(), k); err != nil || len(replaced) != 1 || replaced[0].Repo != "demo" {
		t.Errorf("Trust for any repository: replaced %v, %v; want the key for demo", replaced, err)
	}
	s.Close()
	if obs, err := installWith(t, o, "hello"); err != nil || told(obs) != nil {
		t.Fatalf("install with the key the root trusts: %v, told %q", err, told(obs))
	}
	var pins pin.Set
	err := install.View(o.Root, install.Options{}, nil, func(d *db.DB) (err error) { pins, err = d.Repos(); return err })
	if p := pins.At(r.URL + "/"); err != nil || p == nil || len(p.Keys) != 1 || p.Keys[0] != k.String() {
		t.Errorf("the pin: %+v, %v; want it pinned to %s", p, err, id)
	}

	s, _ = newSession(t, o, "")
	d, err := s.Distrust(t.Context(), id)
	if err != nil || len(d.Removed) != 1 || len(d.Unpinned) != 1 || d.Unpinned[0].Name != "demo" || len(d.Unpinned[0].Keys) != 0 {
		t.Errorf("Distrust: %+v, %v; want the key removed, and demo pinned to none", d, err)
	}
	if data, _ := os.ReadFile(pin.TrustedKeysFile(o.Root)); len(data) != 0 {
		t.Errorf("trusted-keys after Distrust: %q", data)
	}
	if d, err := s.Distrust(t.Context(), id); err != nil || len(d.Removed) != 0 {
		t.Errorf("Distrust of a key not trusted: %+v, %v; want none removed", d, err)
	}
	s.Close()
	refused := func(what string, want error) {
		t.Helper()
		was := stateOf(t, o)
		_, err := installWith(t, o, "tool")
		var pe *trust.PinnedError
		if !errors.Is(err, want) || !errors.As(err, &pe) || !session.PinRefused(err) || pe.Name != "demo" || pe.Version != 1 || len(pe.KeyIDs) != 0 {
			t.Errorf("%s: %v; want %v, a refusal of the pin to no key", what, err, want)
		}
		was.same(t, stateOf(t, o))
	}
	refused("the good index, its key distrusted", trust.ErrUntrusted)

	s, _ = newSession(t, o, "")
	if _, _, err := s.Trust(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	s.Close()
	index, _ := r.Files()
	r.Put(index, nil)
	refused("the index unsigned", trust.ErrUnsigned)

	s, _ = newSession(t, o, "")
	if f, err := s.Forget(t.Context(), ""); err != nil || len(f.Gone) != 1 || f.Gone[0].Version != 1 {
		t.Errorf("Forget: %+v, %v; want version 1 gone", f, err)
	}
	if _, err := s.Distrust(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	s.Close()
	obs, err := installWith(t, o, "tool")
	if err != nil || len(told(obs)) != 1 || !strings.HasPrefix(told(obs)[0], "unverified (local false): repository "+r.URL+"/ is not signed") {
		t.Errorf("install of the unsigned index once forgotten: %v, told %q", err, told(obs))
	}
}

// TestPinEveryCall installs from the signed repository with its key, then, without it,
// has every call that reads the index read a tampered one: each refuses it, naming the
// pin; and a lockfile made without the key is refused for a sync, naming the pin.
func TestPinEveryCall(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"libgreet", "1"}, [2]string{"hello", "1"})
	o := signedUser(t, r, true)
	if _, err := installWith(t, o, "libgreet"); err != nil {
		t.Fatal(err)
	}
	unsigned, err := lockWith(t, signedUser(t, r, false), nil, "hello")
	if err != nil || unsigned.Index != nil {
		t.Fatalf("lock without the key: %+v, %v; want no index recorded", unsigned, err)
	}
	index, sig := r.Files()
	r.Put(bytes.Replace(index, []byte(`"hello"`), []byte(`"hellp"`), 1), sig)
	o.Keys = nil
	for _, tt := range []struct {
		what string
		call func(s *session.Session) error
	}{
		{"OpenFetcher", func(s *session.Session) error { _, _, err := session.OpenFetcher(s, t.Context(), false); return err }},
		{"OpenFetcher, dry", func(s *session.Session) error { _, _, err := session.OpenFetcher(s, t.Context(), true); return err }},
		{"Fetch", func(s *session.Session) error { return s.Fetch(t.Context(), []repo.Requirement{{Name: "hello"}}) }},
		{"Change", func(s *session.Session) error { return installIn(s, "hello") }},
	} {
		s, _ := newSession(t, o, "")
		err := tt.call(s)
		var pe *trust.PinnedError
		if !errors.Is(err, trust.ErrBadSignature) || !errors.As(err, &pe) || pe.Name != "demo" || !slices.Equal(pe.KeyIDs, []string{r.Key.Public().ID()}) {
			t.Errorf("%s without the key: %v; want a bad signature, naming the pin", tt.what, err)
		}
	}
	s, _ := newSession(t, o, "")
	err = session.CheckLockSigned(s, unsigned, "unsigned.lock")
	want := pin.LockSignedError{Path: "unsigned.lock", Root: o.Root, Name: "demo", KeyIDs: []string{r.Key.Public().ID()}}
	if le := (*pin.LockSignedError)(nil); !errors.Is(err, pin.ErrLockUnverified) || !errors.As(err, &le) ||
		le.Path != want.Path || le.Root != want.Root || le.Name != want.Name || !slices.Equal(le.KeyIDs, want.KeyIDs) {
		t.Errorf("CheckLockSigned of a lockfile made without the key: %v; want a *pin.LockSignedError of %+v", err, want)
	}
}

// lockWith locks reqs, as pkg lock does, against the indexes of a new session of o, the
// lockfile it replaces being old.
func lockWith(t *testing.T, o session.Options, old *repo.Lock, reqs ...string) (*repo.Lock, error) {
	t.Helper()
	s, _ := newSession(t, o, "")
	defer s.Close()
	_, ix, err := session.OpenFetcher(s, t.Context(), false)
	if err != nil {
		return nil, err
	}
	var rs []repo.Requirement
	for _, r := range reqs {
		rs = append(rs, repo.Requirement{Name: r})
	}
	if rs == nil && old != nil {
		rs = old.Requires
	}
	return txn.Lock(old, ix, rs, "pkg.lock", nil)
}

// TestLockSigned checks what a lockfile records of a signed index, and what is refused:
// locking again against an older or unverified index of the repository, and a sync that
// requires signatures of a lockfile no key trusted here vouches for.
func TestLockSigned(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"})
	v1, sig1 := r.Files()
	r.Sign(time.Hour, "") // version 2
	o := signedUser(t, r, true)
	id := r.Key.Public().ID()
	l, err := lockWith(t, o, nil, "hello")
	if err != nil || l.Index == nil || l.Index.Name != "demo" || l.Index.Version != 2 || !slices.Equal(l.Index.Keys, []string{id}) {
		t.Fatalf("lock with the key: %+v, %v; want index demo version 2 verified by %s", l.Index, err, id)
	}

	// A mirror serves version 1 to a runner with a cold cache.
	r.Put(v1, sig1)
	cold := func(o session.Options) session.Options { o.Cache = filepath.Join(t.TempDir(), "cache"); return o }
	_, err = lockWith(t, cold(o), l)
	if !errors.Is(err, pin.ErrLockRollback) {
		t.Errorf("lock against version 1: %v; want pin.ErrLockRollback", err)
	}
	unkeyed := o
	unkeyed.Keys = nil
	if _, err := lockWith(t, cold(unkeyed), l); !errors.Is(err, pin.ErrLockNotVerified) {
		t.Errorf("lock without the key: %v; want pin.ErrLockNotVerified", err)
	}
	// The cache's copy was verified by the key: without it, the index is refused outright.
	_, err = lockWith(t, unkeyed, l)
	if pe := (*trust.PinnedError)(nil); !errors.As(err, &pe) || pe.Root != "" || pe.Version != 2 || !slices.Equal(pe.KeyIDs, []string{id}) || !session.PinRefused(err) {
		t.Errorf("lock without the key, the cache's copy verified: %v; want a *trust.PinnedError of the cache, version 2, by %s", err, id)
	}

	unsigned, err := lockWith(t, cold(unkeyed), nil, "hello")
	if err != nil || unsigned.Index != nil {
		t.Fatalf("lock without the key: %+v, %v", unsigned, err)
	}
	s, _ := newSession(t, o, "")
	if err := session.CheckLockSigned(s, l, "pkg.lock"); err != nil {
		t.Errorf("CheckLockSigned of the lockfile made with the key: %v", err)
	}
	required := unkeyed
	required.RequireSigned = true
	for _, tt := range []struct {
		what string
		o    session.Options
		l    *repo.Lock
		want error
		name string   // the repository the *pin.LockSignedError names
		keys []string // and the keys
	}{
		{"signatures required, a lockfile made without the key", required, unsigned, pin.ErrLockUnverified, "", nil},
		{"a key trusted, a lockfile made without it", o, unsigned, pin.ErrLockUnverified, "", nil},
		{"another key trusted, a lockfile verified by the key", signedUserKeyed(t, r, newKey(t).Public()), l, pin.ErrLockUntrusted, "demo", []string{id}},
	} {
		s, _ := newSession(t, tt.o, "")
		err := session.CheckLockSigned(s, tt.l, "unsigned.lock")
		le := (*pin.LockSignedError)(nil)
		if !errors.Is(err, tt.want) || !errors.As(err, &le) || le.Path != "unsigned.lock" || le.Root != "" || le.Name != tt.name || !slices.Equal(le.KeyIDs, tt.keys) {
			t.Errorf("%s: %v; want %v of unsigned.lock naming %q, keys %q", tt.what, err, tt.want, tt.name, tt.keys)
		}
	}
	if again, err := lockWith(t, cold(o), unsigned); err != nil || again.Index == nil || again.Index.Version != 1 {
		t.Errorf("lock with the key of a lockfile made without it: %+v, %v; want index version 1 recorded", again, err)
	}
}

// signedUserKeyed is signedUser trusting k rather than r's key.
func signedUserKeyed(t *testing.T, r *testrepo.Signed, k trust.PublicKey) session.Options {
	o := signedUser(t, r, false)
	o.Keys = []trust.KeySource{{Name: "given", Keys: []trust.PublicKey{k}}}
	return o
}

// TestFrozenOfflineOlderCopy: offline, a frozen sync of a lockfile made from version 2 of
// a signed index, with a cache restored from before (its copy version 1), is refused as a
// rollback of the cache's copy: pin.ErrLockRollback and ErrOffline, not a mirror's.
func TestFrozenOfflineOlderCopy(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"})
	o := signedUser(t, r, true)
	if _, err := lockWith(t, o, nil, "hello"); err != nil { // the cache keeps version 1
		t.Fatal(err)
	}
	r.Sign(time.Hour, "") // version 2
	online := o
	online.Root, online.Cache = filepath.Join(t.TempDir(), "root"), filepath.Join(t.TempDir(), "cache")
	l, err := lockWith(t, online, nil, "hello")
	if err != nil || l.Index == nil || l.Index.Version != 2 {
		t.Fatalf("lock against version 2: %+v, %v", l, err)
	}
	o.Offline, o.Root = true, filepath.Join(t.TempDir(), "root")
	s, _ := newSession(t, o, "")
	defer s.Close()
	_, err = s.Plan(t.Context(), session.Request{Op: session.Sync, Lock: l, LockPath: "pkg.lock", LockRepos: true, Frozen: true})
	if !errors.Is(err, pin.ErrLockRollback) || !errors.Is(err, session.ErrOffline) {
		t.Errorf("offline frozen sync with the cache's copy older than the lockfile's: %v; want pin.ErrLockRollback and session.ErrOffline", err)
	}
}

// TestSignedGivenWithCredential gives the configured, signed repository by its URL with a
// user and password, which its server requires: it is still the configured repository,
// whose key verifies its index and to which the root pins it, with no credential recorded;
// an index signed by another key is refused, and so is the unsigned one.
func TestSignedGivenWithCredential(t *testing.T) {
	r := testrepo.NewSigned(t, "demo", [2]string{"hello", "1"}, [2]string{"tool", "1"}, [2]string{"more", "1"})
	files := http.FileServer(http.Dir(r.Dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != "ci" || p != "s3cret" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	withUser, _ := url.Parse(srv.URL)
	withUser.User = url.UserPassword("ci", "s3cret")

	o := signedUser(t, r, false)
	o.Repos = []config.Repo{{URLs: []string{withUser.String() + "/"}, File: "--repo"}}
	cfg := "[repo.demo]\nurls = [\"" + srv.URL + "\"]\nkeys = [\"" + r.Key.Public().String() + "\"]\n"
	if err := os.MkdirAll(filepath.Join(o.Root, ".pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Root, ".pkg", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if obs, err := installWith(t, o, "hello"); err != nil || told(obs) != nil {
		t.Fatalf("install from the configured repository given with a credential: %v, told %q", err, told(obs))
	}
	rec := stateOf(t, o).db
	if !strings.Contains(rec, "repository {Location:"+srv.URL+"/ Name:demo Version:1 SHA256:") || strings.Contains(rec, "s3cret") {
		t.Errorf("database: %s; want the repository pinned by its URL without the credential", rec)
	}

	index, _ := r.Files()
	r.SignWith(index, newKey(t))
	was := stateOf(t, o)
	if _, err := installWith(t, o, "tool"); !errors.Is(err, trust.ErrUntrusted) {
		t.Errorf("index signed by another key: %v, want %v", err, trust.ErrUntrusted)
	}
	r.Put(index, nil)
	if _, err := installWith(t, o, "more"); !errors.Is(err, trust.ErrUnsigned) {
		t.Errorf("unsigned index: %v, want %v", err, trust.ErrUnsigned)
	}
	was.same(t, stateOf(t, o))
}
