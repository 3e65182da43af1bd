package main

import (
	"strings"
	"testing"
)

// pinRepos configures two repositories, a (priority 10: lib 1.0 and 2.0, tool 3.0) and b
// (tool 2.0), and returns an env using them and the configuration's text.
func pinRepos(t *testing.T) (*env, multiRepo, multiRepo) {
	t.Helper()
	a := newMultiRepo(t, "a", "lib 1.0", "lib 2.0", "tool 3.0")
	b := newMultiRepo(t, "b", "tool 2.0")
	userConfig(t, "[repo.a]\nurls = [\""+a.url+"\"]\npriority = 10\n\n[repo.b]\nurls = [\""+b.url+"\"]\n")
	return newEnv(t, t.TempDir(), ""), a, b
}

// TestPinMovesInstalled installs REPO/NAME over a package installed from another
// repository: the request moves it to that repository's, by version and by archive,
// and is recorded only once the package installed meets it.
func TestPinMovesInstalled(t *testing.T) {
	e, _, _ := pinRepos(t)
	e.ok("install", "tool", "lib=1.0")
	checkRun(t, e, "tool", "tool 3.0 from a")
	out, _ := e.ok("install", "b/tool")
	if strings.Contains(out, "already installed") || !strings.Contains(out, "downgraded tool 3.0 to 2.0") {
		t.Errorf("install b/tool over a's tool 3.0:\n%s", out)
	}
	checkRun(t, e, "tool", "tool 2.0 from b")
	if out, _ := e.ok("info", "tool"); !strings.Contains(out, "as b/tool") {
		t.Errorf("info tool:\n%s", out)
	}
	if out, _ := e.ok("upgrade", "tool"); !strings.Contains(out, "everything is up to date") {
		t.Errorf("upgrade tool, kept to b:\n%s", out)
	}
	checkRun(t, e, "tool", "tool 2.0 from b")

	// One version in two repositories, from two archives: the second pin replaces it.
	team := newMultiRepo(t, "team", "tool 2.0")
	stable := newMultiRepo(t, "stable", "tool 2.0")
	userConfig(t, "[repo.team]\nurls = [\""+team.url+"\"]\npriority = 20\n\n[repo.stable]\nurls = [\""+stable.url+"\"]\n")
	f := newEnv(t, t.TempDir(), "")
	f.ok("install", "team/tool=2.0")
	checkRun(t, f, "tool", "tool 2.0 from team")
	out, _ = f.ok("install", "stable/tool=2.0")
	if strings.Contains(out, "already installed") || !strings.Contains(out, "replaced tool 2.0") {
		t.Errorf("install stable/tool=2.0 over team's:\n%s", out)
	}
	checkRun(t, f, "tool", "tool 2.0 from stable")
	if out, _ := f.ok("info", "tool"); !strings.Contains(out, "as stable/tool=2.0") {
		t.Errorf("info tool:\n%s", out)
	}
	if out, _ := f.ok("install", "stable/tool=2.0"); !strings.Contains(out, "tool 2.0 is already installed") {
		t.Errorf("install stable/tool=2.0 again:\n%s", out)
	}
}
