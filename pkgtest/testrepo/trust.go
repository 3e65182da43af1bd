package testrepo

import (
	"testing"

	"pkg/trust"
)

// Key returns the public half of a new key.
func Key(t testing.TB) trust.PublicKey {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}

// Verified is the Result of an index of repository name at loc, version v, with sha256
// sha, that key verified and is trusted for.
func Verified(loc, name string, v uint64, sha string, key trust.PublicKey) trust.Result {
	return trust.Result{Record: trust.Record{Location: loc, Name: name, Version: v, SHA256: sha},
		KeyID: key.ID(), KeyIDs: []string{key.ID()}, Keys: []trust.PublicKey{key}, Trusted: []string{key.ID()}}
}
