package repo

import (
	"errors"
	"strings"
	"testing"
)

// TestParseLockOutside: a lockfile's file URL archive must name a file beneath its
// repository's file URL, so that a lockfile from a pull request cannot make sync read
// any file of the machine; an http(s) archive may be elsewhere, as an index's may. A
// recorded repository that is not an absolute URL is refused.
func TestParseLockOutside(t *testing.T) {
	tests := []struct {
		repo, archive string
		outside       bool
	}{
		{"file:///srv/repo/", "file:///srv/repo/lib-1.5.tar", false},
		{"file:///srv/repo/", "file:///srv/repo/pool/lib-1.5.tar", false},
		{"file:///srv/repo", "file:///srv/repo/lib-1.5.tar", false},
		{"https://example.com/repo/", "https://cdn.example.org/lib-1.5.tar", false},
		{"file:///srv/repo/", "https://cdn.example.org/lib-1.5.tar", false},
		{"https://example.com/repo/", "file:///etc/shadow", true},
		{"file:///srv/repo/", "file:///proc/self/environ", true},
		{"file:///srv/repo/", "file:///srv/repo/../../etc/shadow", true},
		{"file:///srv/repo/", "file:///srv/repo/%2e%2e/%2e%2e/etc/shadow", true},
		{"file:///srv/repo/", "file:///srv/repo/a//b.tar", true},
		{"file:///srv/repo/", "file:///srv/repo-other/lib-1.5.tar", true},
		{"file:///srv/repo/", "file:///srv/repo/lib-1.5.tar?x=1", true},
	}
	for _, tt := range tests {
		pkgs := []Package{{Name: "lib", Version: "1.5", Archive: tt.archive, SHA256: testSum}}
		text := encodeLock(t, NewLock(tt.repo, []Requirement{{Name: "lib"}}, pkgs))
		_, err := decodeLock([]byte(text))
		var out *OutsideError
		switch {
		case tt.outside && (!errors.As(err, &out) || out.Archive != tt.archive || !errors.Is(err, ErrLockfile)):
			t.Errorf("decodeLock of %s from %s: %v; want an *OutsideError naming it", tt.archive, tt.repo, err)
		case !tt.outside && err != nil:
			t.Errorf("decodeLock of %s from %s: %v", tt.archive, tt.repo, err)
		}
	}
	good := encodeLock(t, NewLock("file:///srv/repo/", []Requirement{{Name: "lib"}}, []Package{{Name: "lib", Version: "1.5", Archive: "https://cdn.example.org/lib-1.5.tar", SHA256: testSum}}))
	for _, repoURL := range []string{"", "relative/dir", "/srv/repo/", "ftp://example.com/repo/", "file://host/srv/repo/", "file:relative"} {
		text := strings.Replace(good, `"repo": "file:///srv/repo/"`, `"repo": "`+repoURL+`"`, 1)
		if text == good {
			t.Fatalf("no repo line in\n%s", good)
		}
		if _, err := decodeLock([]byte(text)); err == nil || !errors.Is(err, ErrLockfile) {
			t.Errorf("decodeLock with repo %q: %v; want it refused", repoURL, err)
		}
	}
}
