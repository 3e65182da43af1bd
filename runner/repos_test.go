package runner

import (
	"slices"
	"testing"

	"pkg/config"
)

// TestReposOf: a request names each repository at its first URL, with its own keys.
func TestReposOf(t *testing.T) {
	got := ReposOf([]config.Repo{
		{Name: "main", URLs: []string{"https://a/", "https://mirror/"}, Keys: []string{"pkg-ed25519:k"}},
		{Name: "extra", URLs: []string{"/srv/extra"}},
	})
	if len(got) != 2 || got[0].Name != "main" || got[0].Location != "https://a/" || !slices.Equal(got[0].Keys, []string{"pkg-ed25519:k"}) ||
		got[1].Name != "extra" || got[1].Location != "/srv/extra" || got[1].Keys != nil {
		t.Errorf("ReposOf = %+v", got)
	}
}
