package repo

import (
	"errors"
	"os/exec"
	"testing"

	"pkg/internal/testfs"
)

// debPairs are versions dpkg orders in ways a semver reading does not: "-" and a letter or
// "." begin a revision, "~" sorts before everything, letters before other bytes, a
// missing revision is 0 (deb-version(7)).
var debPairs = [][2]string{
	{"1:2.39.5-0+deb12u3", "1:2.39.5-."},
	{"1:2.39.5-0+deb12u3", "1:2.39.5"},
	{"1:2.39.5-0+deb12u3", "1:2.39.5-0+deb12u3"},
	{"4.2r4", "4.2.1"},
	{"4.2.15-2", "4.2r4"},
	{"1.5r6", "1.5.0"},
	{"1.0~rc1", "1.0"},
	{"1.0~rc1", "1.0-1"},
	{"1.0~~", "1.0~"},
	{"1.0~", "1.0"},
	{"20250419~deb12u2", "20230311+deb12u1"},
	{"20250419~deb12u2", "20250419"},
	{"1.0-1", "1.0-1.1"},
	{"1.0-1~bpo11+1", "1.0-1"},
	{"1.0-1", "1.0-1+deb12u1"},
	{"1.0a", "1.0+"},
	{"1.0a", "1.0."},
	{"1.0+", "1.0."},
	{"1.0", "1.0a"},
	{"0:1.0", "1.0"},
	{"1.0-0", "1.0"},
	{"1.0-00", "1.0-0"},
	{"1.09", "1.9"},
	{"1.0-rc1", "1.0"},
	{"1.0-rc1", "1.0-1"},
	{"1.0-alpha", "1.0-beta"},
	{"1.0", "1.0.0"},
	{"1", "1.0"},
	{"9.0", "1:0.1"},
	{"1.2.3-1", "1.2.3-a"},
	{"2.0-rc1", "2.0-1"},
	{"6.4.2+dfsg-16", "6.4.2+dfsg-16+b1"},
	{"6.4.2+dfsg~rc1-1", "6.4.2+dfsg-1"},
	{"1.2+git20230101", "1.2.1"},
	{"1." + "99999999999999999999999", "1." + "9999999999999999999999"},
	{"10:1", "9:2"},
	{"1.0-1-1", "1.0-1"},
	{"1.0-a-b", "1.0-a"},
	{"2.36.1-8+deb12u1", "2.36.1-8"},
	{"1.0A", "1.0a"},
	{"1.0.Z", "1.0.a"},
}

// dpkgCompare returns -1, 0 or +1 as dpkg --compare-versions orders a and b.
func dpkgCompare(t *testing.T, a, b string) int {
	t.Helper()
	for _, c := range []struct {
		op   string
		want int
	}{{"lt", -1}, {"gt", 1}, {"eq", 0}} {
		err := exec.Command("dpkg", "--compare-versions", a, c.op, b).Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return c.want
		case !errors.As(err, &exit) || exit.ExitCode() != 1:
			t.Fatalf("dpkg --compare-versions %s %s %s: %v", a, c.op, b, err)
		}
	}
	t.Fatalf("dpkg --compare-versions: %q and %q neither lt, gt nor eq", a, b)
	return 0
}

// TestDebianVersionsAgainstDpkg orders the versions of Debian packages, and meets their
// constraints, as dpkg itself does.
func TestDebianVersionsAgainstDpkg(t *testing.T) {
	testfs.NeedTools(t, "dpkg")
	for _, p := range debPairs {
		for _, ab := range [][2]string{p, {p[1], p[0]}} {
			a, b := ab[0], ab[1]
			want := dpkgCompare(t, a, b)
			if got := compareDebian(a, b); got != want {
				t.Errorf("compareDebian(%q, %q) = %d, dpkg says %d", a, b, got, want)
			}
			if got := compareFor(KindDeb, a, b); got != want && (want != 0 || got == 0 && a != b) {
				t.Errorf("compareFor(deb, %q, %q) = %d, dpkg says %d (ties of spelling bytewise)", a, b, got, want)
			}
			for _, op := range []string{"<", "<=", "=", ">=", ">"} {
				r, err := ParseRequirement("x" + op + b)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := r.AllowsOf(KindDeb, a), holds(op, want); got != want {
					t.Errorf("%s allows %s of a Debian package: %v, dpkg says %v", r, a, got, want)
				}
			}
		}
	}
}

// TestDebianNoPreRelease takes the newest version of a Debian package whatever it holds:
// apt has no pre-release rule, so a "~" security update (20250419~deb12u2) is taken over
// the release before it, and "<< 1:2.39.5-." is met by 1:2.39.5-0+deb12u3.
func TestDebianNoPreRelease(t *testing.T) {
	ix := testIndex("ca-certificates 20230311+deb12u1", "ca-certificates 20250419~deb12u2",
		"git 1:2.39.5-0+deb12u3 git-man>1:2.39.5,<1:2.39.5-.", "git-man 1:2.39.5-0+deb12u3")
	for i := range ix.Packages {
		ix.Packages[i].Kind = KindDeb
	}
	for _, tt := range []struct{ req, want string }{
		{"ca-certificates", "ca-certificates 20250419~deb12u2"},
		{"git", "git-man 1:2.39.5-0+deb12u3, git 1:2.39.5-0+deb12u3"},
	} {
		got, err := ix.Resolve(parseReqs(t, tt.req))
		if err != nil || ids(got) != tt.want {
			t.Errorf("Resolve(%s) = %s, %v; want %s", tt.req, ids(got), err, tt.want)
		}
	}
}
