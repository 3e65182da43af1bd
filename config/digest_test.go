package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDigestMirrors reads the by-digest mirrors of every repository and of one, the last
// file that sets the former winning.
func TestDigestMirrors(t *testing.T) {
	dir := t.TempDir()
	sys, user := filepath.Join(dir, "sys.toml"), filepath.Join(dir, "user.toml")
	os.WriteFile(sys, []byte(`digest-mirrors = ["http://lan.example/pkg/", "/srv/usb"]
[repo.team]
urls = ["https://team.example/"]
digest-mirrors = ["https://team-cache.example/"]
`), 0o644)
	os.WriteFile(user, []byte(`digest-mirrors = []`+"\n"), 0o644)
	c, err := Load(sys)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://lan.example/pkg/", "/srv/usb"}; !reflect.DeepEqual(c.DigestMirrors, want) {
		t.Errorf("DigestMirrors = %q, want %q", c.DigestMirrors, want)
	}
	if want := []string{"https://team-cache.example/"}; !reflect.DeepEqual(c.Repos[0].DigestMirrors, want) {
		t.Errorf("team's DigestMirrors = %q, want %q", c.Repos[0].DigestMirrors, want)
	}
	if c, err = Load(sys, user); err != nil || len(c.DigestMirrors) != 0 {
		t.Errorf("an empty list in a later file: %q, %v; want none", c.DigestMirrors, err)
	}
	if _, err := parse("f.toml", []byte(`digest-mirrors = ["relative/dir"]`), 0o644); err == nil {
		t.Error("a relative digest mirror was taken")
	}
}
