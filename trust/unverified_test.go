package trust

import (
	"errors"
	"strings"
	"testing"
)

func TestUnverified(t *testing.T) {
	verified := Result{Record: Record{Location: "https://r.example/", Version: 3}, KeyID: "k"}
	for _, tc := range []struct {
		name     string
		res      Result
		standing string
		kind     error // nil: verified
		says     string
	}{
		{"verified", verified, "", nil, ""},
		{"expired", func() Result { r := verified; r.Expired = true; return r }(), "expired version 3", nil, ""},
		{"unsigned", Result{Record: Record{Location: "https://r.example/"}}, "unsigned", ErrUsedUnsigned, "repository https://r.example/ is not signed"},
		{"untrusted", Result{Record: Record{Location: "https://r.example/"}, SignedBy: []string{"a", "b"}}, "signed by a, b", ErrUsedUntrusted, "signed by key a, b, but no key is trusted"},
	} {
		if got := tc.res.Standing(); got != tc.standing {
			t.Errorf("%s: Standing = %q, want %q", tc.name, got, tc.standing)
		}
		u := tc.res.Unverified()
		switch {
		case tc.kind == nil && u != nil:
			t.Errorf("%s: Unverified = %v, want nil", tc.name, u)
		case tc.kind != nil && (u == nil || !errors.Is(u, tc.kind) || !strings.Contains(u.Error(), tc.says)):
			t.Errorf("%s: Unverified = %v, want %v saying %q", tc.name, u, tc.kind, tc.says)
		}
	}
}
