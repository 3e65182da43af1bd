package txn

import (
	"strings"
	"testing"

	"pkg/trust"
)

func TestParseKeySource(t *testing.T) {
	var keys []string
	for range 3 {
		k, err := trust.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.Public().String())
	}
	s, err := ParseKeySource("env", keys[0]+","+keys[1], "team="+keys[2], "")
	if err != nil || s.Name != "env" || len(s.Keys) != 3 || s.Keys[2].Repo != "team" {
		t.Errorf("ParseKeySource = %+v, %v; want 3 keys of env, the last for team", s, err)
	}
	if _, err := ParseKeySource("flag", keys[0], "pkg-ed25519:bad"); err == nil || !strings.HasPrefix(err.Error(), "flag: ") {
		t.Errorf("ParseKeySource of a bad key: %v, want an error naming the source", err)
	}
}

func TestTrusting(t *testing.T) {
	a, b := mustKey(t), mustKey(t)
	sources := []KeySource{{Name: "flag", Keys: []trust.PublicKey{a}}, {Name: "env", Keys: []trust.PublicKey{b, a}}, {Name: "file"}}
	if got := Trusting(sources, a.ID()); strings.Join(got, " ") != "flag env" {
		t.Errorf("Trusting(a) = %q, want flag and env", got)
	}
	if got := Trusting(sources, "0123456789abcdef"); got != nil {
		t.Errorf("Trusting(another) = %q, want none", got)
	}
}

func mustKey(t *testing.T) trust.PublicKey {
	t.Helper()
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}
