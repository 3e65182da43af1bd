package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const loc = "https://example.com/repo/"

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newKey(t testing.TB) PrivateKey {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// index returns an index of the given meta with one package.
func index(name string, version int, expires time.Time) []byte {
	return fmt.Appendf(nil, `{"format": 1, "name": %q, "version": %d, "expires": %q, "packages": [
		{"name": "a", "version": "1", "archive": "a.tar", "size": 1, "sha256": "%s"}]}`,
		name, version, expires.Format(time.RFC3339), strings.Repeat("ab", 32))
}

func boundTo(k PrivateKey, repo string) PublicKey {
	pub := k.Public()
	pub.Repo = repo
	return pub
}

func TestVerify(t *testing.T) {
	good, other := newKey(t), newKey(t)
	later := now.Add(time.Hour)
	ix := index("demo", 5, later)
	sig := Sign(ix, good)
	accepted, err := Policy{Keys: []PublicKey{good.Public()}}.verify(loc, ix, sig, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	prev := accepted.Record
	tampered := bytes.Replace(ix, []byte(`"size": 1`), []byte(`"size": 2`), 1)
	badSig := Sign([]byte("another index"), good) // well formed, by the trusted key, of other bytes
	older := index("demo", 4, later)
	reused := index("demo", 5, later.Add(time.Minute))
	renamed := index("other", 6, later)
	expired := index("demo", 6, now.Add(-time.Second))
	noMeta := []byte(`{"format": 1, "packages": []}`)
	trusted := []PublicKey{good.Public()}
	tests := []struct {
		name     string
		p        Policy
		ix, sig  []byte
		known    []Record
		want     error  // nil: accepted
		of       Error  // the KeyIDs, Version and Name the *Error names
		contains string // in the error, where no field tells the refusal apart: its own words
	}{
		{"good", Policy{Keys: trusted}, ix, sig, []Record{prev}, nil, Error{}, ""},
		{"newer", Policy{Keys: trusted}, index("demo", 6, later), Sign(index("demo", 6, later), good), []Record{prev}, nil, Error{}, ""},
		{"second signature trusted", Policy{Keys: trusted}, ix, append(Sign(ix, other), sig...), nil, nil, Error{}, ""},
		{"unsigned, no keys", Policy{}, ix, nil, nil, nil, Error{}, ""},
		{"unsigned, required", Policy{RequireSigned: true}, ix, nil, nil, ErrUnsigned, Error{}, "signatures are required"},
		{"signed, no keys, required", Policy{RequireSigned: true}, ix, sig, nil, ErrUntrusted, Error{KeyIDs: []string{good.Public().ID()}}, ""},
		{"signature removed", Policy{Keys: trusted}, ix, nil, nil, ErrUnsigned, Error{}, "no index.json.sig"},
		{"unsigned, key bound to another repository", Policy{Keys: []PublicKey{boundTo(good, "main")}}, ix, nil, nil, ErrUnsigned, Error{},
			"keys are trusted (" + good.Public().ID() + " for repository main only), and with any key trusted every repository must verify with one"},
		{"wrong key", Policy{Keys: trusted}, ix, Sign(ix, other), nil, ErrUntrusted, Error{KeyIDs: []string{other.Public().ID()}}, ""},
		{"tampered index", Policy{Keys: trusted}, tampered, sig, nil, ErrBadSignature, Error{KeyIDs: []string{good.Public().ID()}}, ""},
		{"tampered index, key trusted twice", Policy{Keys: []PublicKey{good.Public(), boundTo(good, "demo")}}, tampered, sig, nil, ErrBadSignature,
			Error{KeyIDs: []string{good.Public().ID()}}, ""},
		{"bad signature", Policy{Keys: trusted}, ix, badSig, nil, ErrBadSignature, Error{KeyIDs: []string{good.Public().ID()}}, ""},
		{"garbage signature", Policy{Keys: trusted}, ix, []byte("hello\n"), nil, ErrBadSignature, Error{}, "line 1"},
		{"no meta", Policy{Keys: trusted}, noMeta, Sign(noMeta, good), nil, ErrMalformed, Error{}, "lacks"},
		{"expired", Policy{Keys: trusted}, expired, Sign(expired, good), nil, ErrExpired, Error{Version: 6, Name: "demo"}, "expired at 2026-01-02T03:04:04Z"},
		{"expired, allowed", Policy{Keys: trusted, AllowExpired: true}, expired, Sign(expired, good), nil, nil, Error{}, ""},
		{"rollback", Policy{Keys: trusted}, older, Sign(older, good), []Record{prev}, ErrRollback, Error{Version: 4, Name: "demo"}, ""},
		{"same version, other bytes", Policy{Keys: trusted}, reused, Sign(reused, good), []Record{prev}, ErrReused, Error{Version: 5, Name: "demo"}, ""},
		{"another repository", Policy{Keys: trusted}, renamed, Sign(renamed, good), []Record{prev}, ErrWrongName, Error{Version: 6, Name: "other"}, ""},
		{"key bound to another repository", Policy{Keys: []PublicKey{boundTo(good, "main")}}, ix, sig, nil, ErrNotBound, Error{KeyIDs: []string{good.Public().ID()}, Name: "demo"}, ""},
		{"key bound to this repository", Policy{Keys: []PublicKey{boundTo(good, "demo")}}, ix, sig, nil, nil, Error{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.p.verify(loc, tt.ix, tt.sig, tt.known, now)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("verify: %v, want %v", err, tt.want)
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Repo != loc || !slices.Equal(e.KeyIDs, tt.of.KeyIDs) || e.Version != tt.of.Version || e.Name != tt.of.Name {
					t.Errorf("error %+v: want an *Error of %s naming keys %q, version %d, name %q", e, loc, tt.of.KeyIDs, tt.of.Version, tt.of.Name)
				}
				if !strings.Contains(err.Error(), tt.contains) {
					t.Errorf("error %q: want it to say %q", err, tt.contains)
				}
				if res.Verified() {
					t.Errorf("refused, yet verified: %+v", res)
				}
				return
			}
			if len(tt.p.Keys) > 0 != res.Verified() {
				t.Errorf("verified %v with %d keys", res.Verified(), len(tt.p.Keys))
			}
		})
	}
}

func TestVerifyResult(t *testing.T) {
	k := newKey(t)
	ix := index("demo", 7, now.Add(-time.Hour))
	res, err := Policy{Keys: []PublicKey{k.Public()}, AllowExpired: true}.verify(loc, ix, Sign(ix, k), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Location != loc || res.Name != "demo" || res.Version != 7 || len(res.SHA256) != 64 || res.KeyID != k.Public().ID() || !res.Expired ||
		len(res.Keys) != 1 || res.Keys[0].String() != k.Public().String() {
		t.Errorf("result %+v", res)
	}
	// A key trusted several times counts once, as the first binding that may sign demo.
	twice := Policy{Keys: []PublicKey{boundTo(k, "other"), boundTo(k, "demo"), k.Public()}, AllowExpired: true}
	if res, err := twice.verify(loc, ix, Sign(ix, k), nil, now); err != nil || len(res.KeyIDs) != 1 || len(res.Keys) != 1 || res.Keys[0].Repo != "demo" {
		t.Errorf("key trusted thrice: %+v, %v; want one key, bound to demo", res, err)
	}
	res, err = Policy{}.verify(loc, ix, Sign(ix, k), nil, now)
	if err != nil || res.Verified() || len(res.SignedBy) != 1 || res.SignedBy[0] != k.Public().ID() || res.Location != loc {
		t.Errorf("unverified result %+v, %v", res, err)
	}
}

func TestParseKeys(t *testing.T) {
	a, b := newKey(t).Public(), newKey(t).Public()
	text := fmt.Sprintf("# publishers\n%s  # main\ndemo=%s,\t%s\r\n", a, b, a)
	keys, err := parseKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || keys[0].String() != a.String() || keys[1].Repo != "demo" || keys[1].ID() != b.ID() || keys[2].Repo != "" {
		t.Errorf("parseKeys: %v", keys)
	}
	if got := keys[1].String(); got != "demo="+b.String() {
		t.Errorf("String: %q", got)
	}
	for _, bad := range []string{"pkg-ed25519:", "pkg-ed25519:AAAA", "ssh-ed25519 AAAA", "=" + a.String(), "x=y", a.String() + "A", "Demo=" + a.String()} {
		if _, err := parseKeys(bad); !errors.Is(err, ErrKey) {
			t.Errorf("parseKeys(%q): %v, want ErrKey", bad, err)
		}
	}
	file := string(newKey(t).marshal())
	secret := strings.TrimSpace(file[strings.Index(file, secretPrefix):])
	if _, err := parseKeys(secret); !errors.Is(err, ErrPrivateKey) || strings.Contains(err.Error(), secret[len(secretPrefix):]) {
		t.Errorf("parseKeys of a private key: %v; want an error that does not show it", err)
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	k := newKey(t)
	if err := WriteKeyFile(path, k); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, %v; want 0600", info.Mode(), err)
	}
	got, err := ReadKeyFile(path)
	if err != nil || got.Public().String() != k.Public().String() {
		t.Errorf("ReadKeyFile: %v, %v", got.Public(), err)
	}
	if err := WriteKeyFile(path, newKey(t)); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteKeyFile over an existing key: %v", err)
	}
	if again, _ := ReadKeyFile(path); again.Public().String() != k.Public().String() {
		t.Error("the existing key was replaced")
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("%d files left, want the key only", len(ents))
	}
	if err := os.WriteFile(path+".pub", []byte(k.Public().String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(path + ".pub"); err == nil {
		t.Error("ReadKeyFile read a public key as a signing key")
	}
	missing := filepath.Join(t.TempDir(), "keys")
	if err := WriteKeyFile(filepath.Join(missing, "k"), k); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteKeyFile into a missing directory: %v", err)
	}
}

func TestSignatureFile(t *testing.T) {
	a, b := newKey(t), newKey(t)
	data := Sign([]byte("x"), a, b)
	sigs, err := parseSignatures(data)
	if err != nil || len(sigs) != 2 || sigs[0].keyID != a.Public().ID() || sigs[1].keyID != b.Public().ID() {
		t.Fatalf("parseSignatures: %v, %v", sigs, err)
	}
	future := append([]byte("pkg-sig 2 whatever comes next\n"), data...)
	if sigs, err := parseSignatures(future); err != nil || len(sigs) != 2 {
		t.Errorf("with a later format's line: %v, %v", sigs, err)
	}
	for _, bad := range []string{"", "\n", "pkg-sig 2 x\n", "pkg-sig 1 abc AAAA\n", string(data) + "trailing\n", strings.Repeat("x", MaxSignatureSize+1)} {
		if _, err := parseSignatures([]byte(bad)); err == nil {
			t.Errorf("parseSignatures(%.40q): no error", bad)
		}
	}
}

func FuzzParseSignatures(f *testing.F) {
	f.Add(Sign([]byte("x"), newKey(f)))
	f.Add([]byte("pkg-sig 2 x\npkg-sig 1 0011223344556677 AAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sigs, err := parseSignatures(data)
		if err == nil && len(sigs) == 0 {
			t.Error("no error and no signature")
		}
	})
}

// FuzzParseKeys checks that a key parsed is written back as its text (editTrusted keeps the
// keys of a line it edits so) and round-trips.
func FuzzParseKeys(f *testing.F) {
	f.Add("demo=" + newKey(f).Public().String() + ", # c\n" + newKey(f).Public().String())
	f.Fuzz(func(t *testing.T, text string) {
		keys, err := parseKeys(text)
		if err != nil {
			return
		}
		var fields []string
		for line := range strings.Lines(text) {
			line, _, _ = strings.Cut(line, "#")
			fields = append(fields, strings.FieldsFunc(line, isKeySeparator)...)
		}
		if len(fields) != len(keys) {
			t.Fatalf("%d keys of %d fields", len(keys), len(fields))
		}
		for i, k := range keys {
			if k.String() != fields[i] {
				t.Errorf("key %q is written back as %q", fields[i], k.String())
			}
			again, err := ParsePublicKey(k.String())
			if err != nil || again.String() != k.String() {
				t.Errorf("%q does not round-trip: %v", k.String(), err)
			}
		}
	})
}

func TestKeyScope(t *testing.T) {
	k := newKey(t).Public()
	if got := k.Scope(); got != "for any repository" {
		t.Errorf("Scope of a key for any repository = %q", got)
	}
	k.Repo = "demo"
	if got := k.Scope(); got != "for repository demo only" {
		t.Errorf("Scope of a key bound to demo = %q", got)
	}
}

func TestParseKeyID(t *testing.T) {
	k := newKey(t).Public()
	for _, tt := range []struct {
		s    string
		want string
		ok   bool
	}{
		{k.String(), k.ID(), true},
		{"demo=" + k.String(), k.ID(), true},
		{k.ID(), k.ID(), true},
		{"0123456789ABCDEF", "", false},
		{"0123456789abcde", "", false},
		{"pkg-ed25519:AAAA", "", false},
	} {
		id, ok := ParseKeyID(tt.s)
		if ok != tt.ok || ok && id != tt.want {
			t.Errorf("ParseKeyID(%q) = %q, %v; want %q, %v", tt.s, id, ok, tt.want, tt.ok)
		}
	}
}
