package report

import (
	"reflect"
	"testing"

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
	})
	want := []string{
		"local (from --repo)",
		"  url    /srv/r",
		"team (priority 10, from /etc/pkg.toml)",
		"  url    https://a/",
		"  mirror https://b/",
		"  key    " + k.Public().ID() + " " + key,
		"  key    ? bad",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReposText =\n%q\nwant\n%q", got, want)
	}
}
