package trust

import (
	"errors"
	"strings"
	"testing"
)

func TestParseKeySource(t *testing.T) {
	var keys []string
	for range 3 {
		k, err := GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.Public().String())
	}
	s, err := ParseKeySource("env", keys[0]+","+keys[1], "team="+keys[2], "")
	if err != nil || s.Name != "env" || len(s.Keys) != 3 || s.Keys[2].Repo != "team" {
		t.Errorf("ParseKeySource = %+v, %v; want 3 keys of env, the last for team", s, err)
	}
	if _, err := ParseKeySource("flag", keys[0], "pkg-ed25519:bad"); !errors.Is(err, ErrKey) || !strings.HasPrefix(err.Error(), "flag: ") {
		t.Errorf("ParseKeySource of a bad key: %v, want an error naming the source", err)
	}
}

func TestTrusting(t *testing.T) {
	a, b := newKey(t).Public(), newKey(t).Public()
	sources := []KeySource{{Name: "flag", Keys: []PublicKey{a}}, {Name: "env", Keys: []PublicKey{b, a}}, {Name: "file"}}
	if got := Trusting(sources, a.ID()); strings.Join(got, " ") != "flag env" {
		t.Errorf("Trusting(a) = %q, want flag and env", got)
	}
	if got := Trusting(sources, "0123456789abcdef"); got != nil {
		t.Errorf("Trusting(another) = %q, want none", got)
	}
}
