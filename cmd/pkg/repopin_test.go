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
	if out, _ := e.ok("upgrade", "tool"); strings.Contains(out, "upgraded") {
		t.Errorf("upgrade tool, kept to b:\n%s", out)
	}
	checkRun(t, e, "tool", "tool 2.0 from b")

	// One version in two repositories, from two archives: the second pin replaces it.
	f := twoArchives(t)
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

// TestPinRepoGone drops from the configuration the repository a package was asked from:
// an upgrade of another package moves it alone, a whole upgrade keeps the package, saying
// why in one line, and what needs the repository (an upgrade naming the package, its
// reinstall) is refused naming it, with the ways out.
func TestPinRepoGone(t *testing.T) {
	e, a, _ := pinRepos(t)
	e.ok("install", "lib", "b/tool=2.0")
	checkRun(t, e, "tool", "tool 2.0 from b")
	userConfig(t, "[repo.a]\nurls = [\""+a.url+"\"]\npriority = 10\n")
	a.publish(t, "a", "lib 3.0")

	if out, _ := e.ok("upgrade", "lib"); !strings.Contains(out, "upgraded lib 2.0 to 3.0") || strings.Contains(out, "tool") {
		t.Errorf("upgrade lib with b gone:\n%s", out)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "kept tool at 2.0: repository b, which it was asked from, is not in use\n") {
		t.Errorf("upgrade with b gone:\n%s", out)
	}
	checkRun(t, e, "tool", "tool 2.0 from b")
	if out, _ := e.ok("outdated"); !strings.Contains(out, "tool was asked for from repository b, which is not in use") {
		t.Errorf("outdated with b gone:\n%s", out)
	}
	for _, args := range [][]string{{"upgrade", "tool"}, {"install", "--reinstall", "tool"}} {
		_, stderr, code := e.pkg(args...)
		if code != 1 || !strings.Contains(stderr, "tool 2.0 was asked for from repository b, which is not in use") ||
			!strings.Contains(stderr, "--repo b=URL") || !strings.Contains(stderr, "'"+e.cmd("install tool")+"'") || strings.Contains(stderr, "did you mean") {
			t.Errorf("%v with b gone: exit %d\n%s", args, code, stderr)
		}
	}
	e.ok("install", "tool")
	checkRun(t, e, "tool", "tool 3.0 from a")
	if out, _ := e.ok("info", "tool"); !strings.Contains(out, "requested: yes, as tool") {
		t.Errorf("info tool after install tool:\n%s", out)
	}
}

// TestPinOutdated lists a package pinned to a repository with the version an upgrade
// takes it to there, not another repository's, and says it is held to it, as upgrade does.
func TestPinOutdated(t *testing.T) {
	e, _, b := pinRepos(t)
	e.ok("install", "b/tool")
	out, _ := e.ok("outdated")
	if !strings.Contains(out, "tool  2.0        2.0      3.0") || !strings.Contains(out, "tool is held to repository b") {
		t.Errorf("outdated with tool pinned to b:\n%s", out)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "kept tool at 2.0: held to repository b, which it was asked from (newest 3.0)") {
		t.Errorf("upgrade with tool pinned to b:\n%s", out)
	}
	b.publish(t, "b", "tool 2.5")
	out, _ = e.ok("outdated")
	if !strings.Contains(out, "tool  2.0        2.5      3.0") {
		t.Errorf("outdated with b's tool 2.5:\n%s", out)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "upgraded tool 2.0 to 2.5") {
		t.Errorf("upgrade with b's tool 2.5:\n%s", out)
	}
	checkRun(t, e, "tool", "tool 2.5 from b")

	// One version in two repositories, from two archives: the pinned one's is installed.
	f := twoArchives(t)
	f.ok("install", "stable/tool=2.0")
	checkRun(t, f, "tool", "tool 2.0 from stable")
	if out, _ := f.ok("outdated"); strings.Contains(out, "tool") {
		t.Errorf("outdated after stable/tool=2.0:\n%s", out)
	}
}

// twoArchives configures two repositories that each publish tool 2.0, from archives of
// their own: team, of the higher priority, and stable; and returns a root using them.
func twoArchives(t *testing.T) *env {
	t.Helper()
	team := newMultiRepo(t, "team", "tool 2.0")
	stable := newMultiRepo(t, "stable", "tool 2.0")
	userConfig(t, "[repo.team]\nurls = [\""+team.url+"\"]\npriority = 20\n\n[repo.stable]\nurls = [\""+stable.url+"\"]\n")
	return newEnv(t, t.TempDir(), "")
}
