package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pkg/report"
	"pkg/txn"
)

// TestHold installs semver=7.5.4, a hold as apt-mark hold or brew pin: upgrade keeps it
// and says so, as outdated, info and the plan do; naming it alone is refused, as brew
// refuses a pinned formula named; an install that would move it is refused; a new
// constraint moves it and holds it there; install without one releases it.
func TestHold(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, v := range []string{"7.5.4", "7.6.0", "7.7.1"} {
		addPackage(t, dir, "semver", v)
	}
	addPackage(t, dir, "app", "1", "semver>=7.7")
	e := newEnv(t, base, dir)
	e.ok("install", "semver=7.5.4")

	out, _ := e.ok("upgrade")
	if want := "kept semver at 7.5.4: held by its request semver=7.5.4 (newest 7.7.1)\nnothing to upgrade\n"; out != want {
		t.Errorf("upgrade: %q, want %q", out, want)
	}
	e.checkInstalled("after upgrade", "semver 7.5.4")
	out, _ = e.ok("upgrade", "--dry-run", "--json")
	plan := decode[txn.Plan](t, "upgrade --dry-run --json", out, txn.Schema)
	if len(plan.Changes) != 0 || len(plan.Held) != 1 || plan.Held[0].HeldBy != "semver=7.5.4" || plan.Held[0].Newest != "7.7.1" {
		t.Errorf("upgrade --dry-run --json: changes %v, held %+v; want none, semver held by semver=7.5.4", plan.Changes, plan.Held)
	}
	out, _ = e.ok("outdated", "--json")
	o := decode[report.Outdated](t, "outdated --json", out, report.OutdatedSchema)
	if want := []report.OutdatedEntry{{Name: "semver", Installed: "7.5.4", Allowed: "7.5.4", Newest: "7.7.1", Held: "semver=7.5.4"}}; !reflect.DeepEqual(o.Packages, want) {
		t.Errorf("outdated --json: %+v, want %+v", o.Packages, want)
	}
	if out, _ := e.ok("outdated"); !strings.HasSuffix(out, "\nsemver is held by its request semver=7.5.4\n") {
		t.Errorf("outdated: %q, want semver said held", out)
	}
	out, _ = e.ok("info", "--json", "semver")
	if i := decode[report.Info](t, "info --json", out, report.InfoSchema); !i.Held || i.Requested != "semver=7.5.4" {
		t.Errorf("info --json semver: held %v, requested %q", i.Held, i.Requested)
	}

	for _, args := range [][]string{{"upgrade", "semver"}, {"upgrade", "--dry-run", "semver"}} {
		_, stderr, code := e.pkg(args...)
		if code != 1 || !strings.Contains(stderr, "pkg: upgrade semver: semver 7.5.4 is held by its request semver=7.5.4 (newest 7.7.1)\n") ||
			!strings.Contains(stderr, "pkg: hint: a package asked for with a version or constraint is held") {
			t.Errorf("%v: exit %d, %q; want the hold named", args, code, stderr)
		}
	}
	if _, stderr, code := e.pkg("install", "app"); code != 1 || !strings.Contains(stderr, "semver=7.5.4") {
		t.Errorf("install of app, which needs semver>=7.7: exit %d, %q; want the hold in the way", code, stderr)
	}
	e.checkInstalled("after the refusals", "semver 7.5.4")

	e.ok("upgrade", "semver>=7.6", "semver<7.7")
	e.checkInstalled("after upgrade semver>=7.6 semver<7.7", "semver 7.6.0")
	if out, _ := e.ok("why", "--json", "semver"); decode[report.Why](t, "why --json", out, report.WhySchema).Requested != "semver>=7.6,<7.7" {
		t.Errorf("why --json semver after the new constraint: %s", out)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "held by its request semver>=7.6,<7.7 (newest 7.7.1)") {
		t.Errorf("upgrade with the new hold: %q", out)
	}
	e.ok("install", "semver=7.7.1")
	e.checkInstalled("after install semver=7.7.1", "semver 7.7.1")
	addPackage(t, dir, "semver", "7.8.0")
	e.ok("upgrade")
	e.checkInstalled("upgrade with semver=7.7.1 held", "semver 7.7.1")
	e.ok("install", "semver")
	e.ok("upgrade")
	e.checkInstalled("upgrade after install semver released it", "semver 7.8.0")
}

// TestOutdatedRepublished republishes an installed version with another archive (repo add
// --replace): outdated lists it, as the upgrade that replaces it, and once that is done
// lists nothing.
func TestOutdatedRepublished(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "other", "1")
	e := newEnv(t, base, dir)
	e.ok("install", "lib", "other")
	fixed := filepath.Join(base, "lib-1.0-fixed.tar")
	if err := os.WriteFile(fixed, packageTar(t, "lib", "1.0", 'w'), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", dir, fixed, "--name", "lib", "--version", "1.0", "--bin", "bin/lib", "--replace")

	out, _ := e.ok("outdated", "--json")
	o := decode[report.Outdated](t, "outdated --json", out, report.OutdatedSchema)
	if want := []report.OutdatedEntry{{Name: "lib", Installed: "1.0", Allowed: "1.0", Newest: "1.0", Republished: true}}; !reflect.DeepEqual(o.Packages, want) {
		t.Errorf("outdated --json: %+v, want %+v", o.Packages, want)
	}
	if out, _ := e.ok("outdated"); !strings.HasSuffix(out, "\nthe repository's entry of lib 1.0 is not the one installed: upgrade installs it in its place\n") {
		t.Errorf("outdated: %q, want lib said republished", out)
	}
	if out, _ := e.ok("upgrade"); !strings.Contains(out, "replaced lib 1.0 with the entry the repository now has of it") {
		t.Errorf("upgrade: %q", out)
	}
	if out, _ := e.ok("outdated"); out != "2 packages up to date\n" {
		t.Errorf("outdated after the upgrade: %q", out)
	}
}
