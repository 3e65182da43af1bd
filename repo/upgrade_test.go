package repo

import (
	"strings"
	"testing"
)

func TestUpgrade(t *testing.T) {
	tests := []struct {
		name      string
		index     []string
		installed []string // "name version depends..."
		names     []string
		want      string // the upgraded set, dependencies first
	}{
		{
			"everything",
			[]string{"app 1.0 lib>=1", "app 1.1 lib>=2", "lib 1.5", "lib 2.0", "lib 2.10"},
			[]string{"app 1.0 lib>=1", "lib 1.5"},
			nil,
			"lib 2.10, app 1.1",
		},
		{
			"up to date",
			[]string{"app 1.0 lib>=1", "lib 1.5"},
			[]string{"app 1.0 lib>=1", "lib 1.5"},
			nil,
			"lib 1.5, app 1.0",
		},
		{
			// plugin stays at 1.0 and its lib<2 holds lib, so app cannot reach 1.1.
			"respects other installed packages",
			[]string{"app 1.0 lib>=1", "app 1.1 lib>=2", "lib 1.5", "lib 1.9", "lib 2.0", "plugin 1.0 lib<2", "plugin 2.0"},
			[]string{"app 1.0 lib>=1", "lib 1.5", "plugin 1.0 lib<2"},
			[]string{"app"},
			"lib 1.9, app 1.0, plugin 1.0",
		},
		{
			"named only",
			[]string{"a 1", "a 2", "b 1", "b 2"},
			[]string{"a 1", "b 1"},
			[]string{"b"},
			"a 1, b 2",
		},
		{
			"new dependency",
			[]string{"app 1.0", "app 2.0 extra", "extra 1"},
			[]string{"app 1.0"},
			nil,
			"extra 1, app 2.0",
		},
		{
			"never older than installed",
			[]string{"jq 1.6", "jq 1.7-rc1"},
			[]string{"jq 1.7"},
			nil,
			"jq 1.7",
		},
		{
			"installed version gone from the index",
			[]string{"jq 1.8"},
			[]string{"tool 1 jq<1.8", "jq 1.7"},
			nil,
			"jq 1.7, tool 1",
		},
		{
			"multi-digit and pre-release ordering",
			[]string{"jq 1.9", "jq 1.10-rc1", "jq 1.10", "jq 1.9.10"},
			[]string{"jq 1.9"},
			nil,
			"jq 1.10",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := testIndex(tt.index...).Upgrade(testIndex(tt.installed...).Packages, tt.names)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tt.want {
				t.Errorf("Upgrade: got %q, want %q", ids(got), tt.want)
			}
		})
	}
}

func TestUpgradeKeepsInstalledEntry(t *testing.T) {
	ix := testIndex("jq 1.7")
	installed := testIndex("jq 1.7").Packages
	installed[0].SHA256 = strings.Repeat("cd", 32) // republished since
	got, err := ix.Upgrade(installed, nil)
	if err != nil || len(got) != 1 || got[0].SHA256 != installed[0].SHA256 {
		t.Errorf("Upgrade = %+v, %v; want the installed jq 1.7 kept", got, err)
	}
}

func TestUpgradeRefuses(t *testing.T) {
	ix := testIndex("app 1.0")
	if _, err := ix.Upgrade(testIndex("app 1.0").Packages, []string{"nope"}); err == nil || err.Error() != "repo: upgrade nope: not installed" {
		t.Errorf("Upgrade of a package not installed: %v", err)
	}
}
