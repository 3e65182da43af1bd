package session_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pkg/config"
	"pkg/internal/testrepo"
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
		o.Keys = []txn.KeySource{{Name: "given", Keys: []trust.PublicKey{r.Key.Public()}}}
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
		setup    func() // before the root accepts the repository
		serve    func() // then the repository changes so
		unkeyed  bool   // the refused install is given no key
		require  bool   // and requires signatures
		want     error  // what errors.Is finds; nil: see text
		text     string // in the error
		pinRefus bool   // a refusal session.PinRefused names (the commands advise on the pin)
	}{{
		name:  "wrong key",
		serve: func() { index, _ := r.Files(); r.SignWith(index, other) },
		want:  trust.ErrUntrusted, text: "is signed by key " + other.Public().ID() + ", which is not trusted", pinRefus: true,
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
		want: trust.ErrBadSignature, text: "does not match index.json",
	}, {
		name:  "tampered index",
		serve: tamper,
		want:  trust.ErrBadSignature, text: "the signature by key " + r.Key.Public().ID() + " does not match index.json",
	}, {
		name:  "expired",
		serve: func() { r.Sign(-time.Hour, "") },
		want:  trust.ErrExpired, text: "index version 2 expired at ",
	}, {
		name:  "rollback",
		setup: func() { older, olderSig = r.Files(); r.Sign(time.Hour, "") },
		serve: func() { r.Put(older, olderSig) },
		want:  trust.ErrRollback, text: "index version 1 is older than version 2, accepted before",
	}, {
		name: "same version, other bytes",
		serve: func() {
			index, _ := r.Files()
			r.SignWith(bytes.Replace(index, []byte(`"hello"`), []byte(`"hellp"`), 1), r.Key)
		},
		want: trust.ErrReused, text: "index version 1 differs from the version 1 accepted before",
	}, {
		name:  "another repository's index",
		serve: func() { r.Sign(time.Hour, "other") },
		want:  trust.ErrWrongName, text: `index is for repository "other", but this location served repository "demo" before`,
	}, {
		// No sentinel marks an index over the limit: fetch says so in words.
		name:  "oversized index",
		serve: func() { r.Huge.Store(true) },
		text:  "index.json is over the 67108864-byte limit",
	}, {
		name:  "signature removed",
		serve: unsign,
		want:  trust.ErrUnsigned, text: "index is not signed (no index.json.sig), but keys are trusted for it", pinRefus: true,
	}, {
		name:    "signature removed, signatures required",
		serve:   unsign,
		require: true,
		want:    trust.ErrUnsigned, text: "pinned repository demo to key " + r.Key.Public().ID(), pinRefus: true,
	}, {
		// The root pinned the repository to the key that verified its index: without the
		// key given, each of these is refused as it is with the key.
		name:    "tampered index, no key given",
		serve:   tamper,
		unkeyed: true,
		want:    trust.ErrBadSignature, text: "pinned repository demo to key " + r.Key.Public().ID() + " when it accepted its index version 1)",
	}, {
		name:    "signed by an untrusted key, no key given",
		serve:   func() { index, _ := r.Files(); r.SignWith(index, other) },
		unkeyed: true,
		want:    trust.ErrUntrusted, text: "is signed by key " + other.Public().ID() + ", which is not trusted", pinRefus: true,
	}, {
		name:    "signature removed, no key given",
		serve:   unsign,
		unkeyed: true,
		want:    trust.ErrUnsigned, text: "pinned repository demo", pinRefus: true,
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
			var pe *txn.PinnedError
			switch {
			case err == nil:
				t.Fatal("installed")
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Errorf("error is not %v", tt.want)
			case tt.want != nil && (!errors.As(err, &pe) || pe.Root != o.Root || pe.Pin.Name != "demo" || pe.Pin.Version != 1 && tt.setup == nil):
				t.Errorf("error is not a *txn.PinnedError of the root's pin: %+v", pe)
			case session.PinRefused(err) != tt.pinRefus:
				t.Errorf("PinRefused = %v, want %v", !tt.pinRefus, tt.pinRefus)
			}
			if !strings.Contains(err.Error(), r.URL) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error lacks %s or %q", r.URL, tt.text)
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
