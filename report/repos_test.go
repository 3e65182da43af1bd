package report

import (
	"reflect"
	"strings"
	"testing"

	"pkg/repo"
	"pkg/trust"
)

func TestReposText(t *testing.T) {
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	key := k.Public().String()
	got := ReposText([]Repository{
		{Name: "local", URLs: []string{"/srv/r"}, From: "--repo"},
		{Name: "team", URLs: []string{"https://a/", "https://b/"}, Keys: []string{key, "bad"}, Priority: 10, From: "/etc/pkg.toml"},
		{Name: "ci", URLs: []string{"https://c/"}, Keys: []string{key}, KeysFrom: []string{"/etc/pkg.toml"}, From: "/home/u/.config/pkg/config.toml"},
	})
	want := []string{
		"local (from --repo)",
		"  url    /srv/r",
		"team (priority 10, from /etc/pkg.toml)",
		"  url    https://a/",
		"  mirror https://b/",
		"  key    " + k.Public().ID() + " " + key,
		"  key    ? bad",
		"ci (priority 0, from /home/u/.config/pkg/config.toml)",
		"  url    https://c/",
		"  key    " + k.Public().ID() + " " + key + " (from /etc/pkg.toml)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReposText =\n%q\nwant\n%q", got, want)
	}
}

// TestAbsentWarnings: a command's path, from a tarball's package.json and never checked
// as the index's commands are, is printed quoted, its control characters escaped.
func TestAbsentWarnings(t *testing.T) {
	p := repo.Package{Name: "tool", Version: "1.0.0", Kind: repo.KindNPM}
	got := AbsentWarnings(p, []repo.Command{{Name: "gone", Path: "package/\x1b[2J\ngone.js"}})
	if len(got) != 1 || strings.ContainsAny(got[0], "\x1b\n") || !strings.Contains(got[0], `"package/\u001b[2J\ngone.js"`) {
		t.Errorf("AbsentWarnings of a path holding ESC and a newline: %q; want it quoted", got)
	}
}
