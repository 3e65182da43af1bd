package session

import (
	"errors"
	"fmt"
	"testing"

	"pkg/config"
	"pkg/repo"
)

// TestConfiguredErrorLock: a repository at a location that serves none is refused naming
// the lockfile that recorded it, by the path LockRepos gave it, and names none for one a
// configuration file gave, whatever that file's path.
func TestConfiguredErrorLock(t *testing.T) {
	l := &repo.Lock{Repos: []repo.LockRepo{{Name: "tools", URL: "/gone/"}}}
	gone := fmt.Errorf("read /gone/index.json: %w", ErrNoRepository)
	for _, tt := range []struct {
		name string
		r    config.Repo
		lock string
	}{
		{"lockfile", config.LockRepos(l, "/p/pkg.lock")[0], "/p/pkg.lock"},
		{"lock of one", config.LockRepos(&repo.Lock{Repo: "/gone/"}, "pkg.lock")[0], "pkg.lock"},
		{"configuration file", config.Repo{Name: "tools", URLs: []string{"/gone/"}, File: "lockfile x"}, ""},
	} {
		var ce *ConfiguredError
		if err := configuredError(tt.r, gone); !errors.As(err, &ce) || ce.Lock != tt.lock || ce.Repo != tt.r.Name || !errors.Is(err, ErrNoRepository) {
			t.Errorf("%s: configuredError = %#v; want a *ConfiguredError of lockfile %q", tt.name, err, tt.lock)
		}
	}
}
