package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/repo"
)

func TestEnvPrefix(t *testing.T) {
	for name, want := range map[string]string{
		"team": "PKG_REPO_TEAM_", "my-repo.v2": "PKG_REPO_MY_REPO_V2_", "c++": "PKG_REPO_C___", "127.0.0.1": "PKG_REPO_127_0_0_1_",
	} {
		if got := EnvPrefix(name); got != want {
			t.Errorf("EnvPrefix(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestCredential reads a repository's credential from each place, the variables first.
func TestCredential(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("  file-token \nsecond line\n"), 0o600)
	passFile := filepath.Join(dir, "pass")
	os.WriteFile(passFile, []byte("file-pass\n"), 0o600)
	for _, tc := range []struct {
		name  string
		table string
		env   map[string]string
		want  Auth
	}{
		{"nothing", ``, nil, Auth{}},
		{"token", `token = "t1"`, nil, Auth{Token: "t1", From: "[repo.my-team] in f.toml"}},
		{"token-file", `token-file = "` + tokenFile + `"`, nil, Auth{Token: "file-token", From: "[repo.my-team] in f.toml"}},
		{"password", `username = "u"` + "\n" + `password = "p"`, nil, Auth{Username: "u", Password: "p", From: "[repo.my-team] in f.toml"}},
		{"password-file", `username = "u"` + "\n" + `password-file = "` + passFile + `"`, nil, Auth{Username: "u", Password: "file-pass", From: "[repo.my-team] in f.toml"}},
		{"token variable first", `token = "t1"`, map[string]string{"PKG_REPO_MY_TEAM_TOKEN": "env"}, Auth{Token: "env", From: "PKG_REPO_MY_TEAM_TOKEN"}},
		{"user variables first", `token = "t1"`, map[string]string{"PKG_REPO_MY_TEAM_USERNAME": "eu", "PKG_REPO_MY_TEAM_PASSWORD": "ep"}, Auth{Username: "eu", Password: "ep", From: "PKG_REPO_MY_TEAM_USERNAME and PKG_REPO_MY_TEAM_PASSWORD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"TOKEN", "USERNAME", "PASSWORD"} {
				t.Setenv("PKG_REPO_MY_TEAM_"+k, tc.env["PKG_REPO_MY_TEAM_"+k])
			}
			c, err := parse("f.toml", []byte("[repo.my-team]\nurls = [\"https://x.example/\"]\n"+tc.table+"\n"), 0o600)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Repos[0].Credential()
			if err != nil || got != tc.want {
				t.Errorf("Credential = %q %q %q from %q, %v; want %q %q %q from %q", got.Token, got.Username, got.Password, got.From, err, tc.want.Token, tc.want.Username, tc.want.Password, tc.want.From)
			}
		})
	}
}

// TestCredentialLocationName takes the variables of the name a repository's location gives
// it, once its index named it otherwise.
func TestCredentialLocationName(t *testing.T) {
	t.Setenv("PKG_REPO_127_0_0_1_TOKEN", "loc")
	r := Repo{Name: "demo", URLs: []string{"http://127.0.0.1:8080/"}, Naming: ByLocation}
	if a, err := r.Credential(); err != nil || a.Token != "loc" {
		t.Errorf("Credential of %s named demo by its index: %v; want the token of PKG_REPO_127_0_0_1_TOKEN", r.URLs[0], err)
	}
	r.Naming = ByUser
	if a, _ := r.Credential(); a.Token != "" {
		t.Error("a repository the user named demo took the variables of its location's name")
	}
}

// TestCredentialLockName: a lockfile's repository takes the variables of the name the lock
// records, and not those of the name its index gave itself, which nothing ties to its URL.
func TestCredentialLockName(t *testing.T) {
	l := &repo.Lock{Repos: []repo.LockRepo{{Name: "tools", URL: "http://127.0.0.1:1/evil/", Index: &repo.LockIndex{Name: "stable"}}}}
	r := LockRepos(l, "pkg.lock")[0]
	if got := r.CredentialVars(); !slices.Equal(got, []string{"PKG_REPO_TOOLS_"}) {
		t.Errorf("CredentialVars = %q", got)
	}
	t.Setenv("PKG_REPO_STABLE_TOKEN", "s3cr3t")
	if a, err := r.Credential(); err != nil || a != (Auth{}) {
		t.Errorf("Credential = %v (from %q), %v; want none: the index's name is not the lock's", a, a.From, err)
	}
	t.Setenv("PKG_REPO_TOOLS_TOKEN", "tok")
	if a, _ := r.Credential(); a.Token != "tok" || a.From != "PKG_REPO_TOOLS_TOKEN" {
		t.Errorf("Credential from %q; want the recorded name's variables", a.From)
	}
}

func TestCredentialErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	for _, tc := range []struct {
		table string
		mode  os.FileMode
	}{
		{`token = "t"` + "\n" + `token-file = "/t"`, 0o600},
		{`username = "u"` + "\n" + `password = "p"` + "\n" + `password-file = "/p"`, 0o600},
		{`token = "t"` + "\n" + `username = "u"`, 0o600},
		{`password = "p"`, 0o600},
		{`token-file = "relative"`, 0o600},
		{`username = "a:b"` + "\n" + `password = "p"`, 0o600},
		{`token = "secret-t"`, 0o644},
		{`username = "u"` + "\n" + `password = "secret-p"`, 0o640},
	} {
		_, err := parse("f.toml", []byte("[repo.team]\nurls = [\"https://x.example/\"]\n"+tc.table+"\n"), tc.mode)
		fe := (*fileError)(nil)
		if !errors.As(err, &fe) || fe.Key != "repo.team" {
			t.Errorf("%q (mode %o): %v, want an error at repo.team", tc.table, tc.mode, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-") {
			t.Errorf("%q: the error shows the secret: %v", tc.table, err)
		}
		if tc.mode != 0o600 && !errors.Is(err, ErrSecretOpen) {
			t.Errorf("%q (mode %o): %v, want ErrSecretOpen", tc.table, tc.mode, err)
		}
	}
	// A token-file is only read when the credential is used.
	c, err := parse("f.toml", []byte("[repo.team]\nurls = [\"https://x.example/\"]\ntoken-file = \""+missing+"\"\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Repos[0].Credential(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing token-file: %v, want ErrNotExist", err)
	}
	t.Setenv("PKG_REPO_TEAM_PASSWORD", "p")
	if _, err := c.Repos[0].Credential(); err == nil || !strings.Contains(err.Error(), "PKG_REPO_TEAM_USERNAME") {
		t.Errorf("a password variable alone: %v", err)
	}
}
