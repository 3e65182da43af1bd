package main

import (
	"strings"
	"testing"

	"pkg/pkgtest/testrepo"
	"pkg/report"
)

// TestSignedRepoName gives a repository given by its URL alone the name its signed index
// gives itself once pkg read it, in repo list, trust add, repo forget and REPO/NAME; the
// name pkg made of its URL (its host) is refused where the user calls it so, and so is a
// name the user gave it that its index does not.
func TestSignedRepoName(t *testing.T) {
	r := testrepo.NewSigned(t, "pubrepo", [2]string{"hello", "1.0"})
	e := newEnv(t, t.TempDir(), r.URL)
	key := r.Key.Public().String()
	names := func() string {
		out, _ := e.ok("repo", "list", "--json")
		var s []string
		for _, r := range decode[report.Repos](t, "repo list --json", out, report.ReposSchema).Repos {
			s = append(s, r.Name)
		}
		return strings.Join(s, ", ")
	}
	if got := names(); got != "127.0.0.1" {
		t.Errorf("repo list before the index was read: %q, want the URL's host", got)
	}
	e.ok("--trusted-key", key, "search")
	if got := names(); got != "pubrepo" {
		t.Errorf("repo list once the index was read: %q, want pubrepo", got)
	}
	for _, args := range [][]string{{"trust", "add", "127.0.0.1=" + key}, {"trust", "add", key, "--repo-name", "127.0.0.1"}, {"repo", "forget", "127.0.0.1"}} {
		_, stderr, code := e.pkg(args...)
		if code != 1 || !strings.Contains(stderr, "pkg: repository "+r.URL+" is named pubrepo, as its index names it, not 127.0.0.1\npkg: hint: call it pubrepo") {
			t.Errorf("%v: exit %d, %q; want the name refused, naming pubrepo", args, code, stderr)
		}
	}
	e.ok("trust", "add", "pubrepo="+key)
	e.ok("install", "pubrepo/hello")
	if _, stderr, code := e.pkg("--repo", "team="+r.URL, "search"); code != 1 || !strings.Contains(stderr, "pkg: repository team ("+r.URL+", from --repo): its index names it pubrepo\n") {
		t.Errorf("--repo team=URL of pubrepo: exit %d, %q; want the name refused", code, stderr)
	}
	withUser := strings.Replace(r.URL, "://", "://ci:S3cret@", 1)
	if _, stderr, code := e.pkg("--repo", "team="+withUser, "search"); code != 1 || strings.Contains(stderr, "S3cret") || !strings.Contains(stderr, "("+r.URL+", from --repo)") {
		t.Errorf("--repo team=URL with a password: exit %d, %q; want the name refused, the URL without its password", code, stderr)
	}
	e.ok("repo", "forget", "pubrepo")
}

// TestForgetNoRepoInUse names a repository that none in use is called, with none in use,
// saying that none is rather than listing nothing.
func TestForgetNoRepoInUse(t *testing.T) {
	e := newEnv(t, t.TempDir(), "")
	e.initRoot()
	_, stderr, code := e.pkg("repo", "forget", "pubrepo")
	if want := "pkg: repo forget: no repository pubrepo in use: none is configured or given\n"; code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("repo forget pubrepo: exit %d, %q; want %q", code, stderr, want)
	}
}
