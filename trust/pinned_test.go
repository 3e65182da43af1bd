package trust

import (
	"errors"
	"testing"
)

// TestPinnedErrorText checks the words of a *PinnedError, the cache's and a root's,
// which pkg prints.
func TestPinnedErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    PinnedError
		want string
	}{
		{PinnedError{Repo: "https://r.example/", Version: 5, KeyIDs: []string{"k1"}},
			"repository https://r.example/: index not verified (it is not signed), but the cache's copy of its index (version 5) was verified by key k1"},
		{PinnedError{Repo: "https://r.example/", Version: 5, KeyIDs: []string{"k1"}, SignedBy: []string{"k2"}},
			"repository https://r.example/: index not verified (no trusted key signed it: it is signed by key k2), but the cache's copy of its index (version 5) was verified by key k1"},
		{PinnedError{Repo: "https://r.example/", Version: 5, KeyIDs: []string{"k1"}, SignedBy: []string{"k1"}},
			"repository https://r.example/: index not verified (it is signed by key k1, which this command does not trust, and so cannot check), but the cache's copy of its index (version 5) was verified by key k1"},
		{PinnedError{Repo: "https://r.example/", Name: "demo", Version: 1, Root: "/r", Err: errors.New("trust: bad signature")},
			"trust: bad signature (root /r pinned repository demo when it accepted its index version 1)"},
		{PinnedError{Repo: "https://r.example/", Name: "demo", Version: 1, KeyIDs: []string{"k1", "k2"}, Root: "/r", Err: errors.New("trust: bad signature")},
			"trust: bad signature (root /r pinned repository demo to keys k1, k2 when it accepted its index version 1)"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
