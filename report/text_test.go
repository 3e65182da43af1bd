package report

import (
	"io"
	"strings"
	"testing"

	"pkg/repo"
	"pkg/txn"
)

// TestWriteText prints each document as text, the tip where it applies.
func TestWriteText(t *testing.T) {
	var plan txn.Plan
	plan.Changes = []txn.Change{
		{Action: "install", Name: "hello", Version: "1.2.0", Download: 2048, Why: "requested"},
		{Action: "upgrade", Name: "libgreet", From: "1.0", Version: "1.1", Why: "dependency of hello"},
	}
	plan.Unchanged = []txn.Change{{Name: "jq", Version: "1.7"}}
	plan.Download, plan.Disk = 2048, -4096
	for _, tt := range []struct {
		name  string
		write func(b io.Writer) error
		want  string
	}{
		{"list", List{Packages: []Installed{{Name: "hello", Version: "1.2.0", Files: 3, Size: 1536}, {Name: "jq", Version: "1.7", Files: 1, Size: 10}}}.WriteText,
			"hello  1.2.0  3 files  1.5 KiB\njq     1.7    1 file   10 B\n"},
		{"search", Search{Packages: []Found{{Name: "hello", Version: "1.2.0", Summary: "says hello", Installed: "1.2.0"}, {Name: "jq", Version: "1.7", Installed: "1.6"}, {Name: "x", Version: "1"}}}.WriteText,
			"hello  1.2.0 [installed]     says hello\njq     1.7 [installed: 1.6]\nx      1\n"},
		{"outdated", Outdated{Packages: []OutdatedEntry{{Name: "jq", Installed: "1.6", Allowed: "1.7", Newest: "2.0"}}}.WriteText,
			"NAME  INSTALLED  ALLOWED  NEWEST\njq    1.6        1.7      2.0\n"},
		{"outdated republished", Outdated{Packages: []OutdatedEntry{{Name: "tc", Installed: "3.0", Allowed: "3.0", Newest: "3.0", Republished: true}}}.WriteText,
			"NAME  INSTALLED  ALLOWED  NEWEST\ntc    3.0        3.0      3.0\nthe repository's entry of tc 3.0 is not the one installed: upgrade installs it in its place\n"},
		{"outdated held to a repository", Outdated{Packages: []OutdatedEntry{
			{Name: "a", Installed: "2.0", Allowed: "2.0", Newest: "3.0", HeldTo: "b"},
			{Name: "t", Installed: "2.0", Allowed: "2.0", Newest: "3.0", HeldTo: "b", Unused: true}}}.WriteText,
			"NAME  INSTALLED  ALLOWED  NEWEST\na     2.0        2.0      3.0\nt     2.0        2.0      3.0\n" +
				"a is held to repository b, which it was asked from\n" +
				"t was asked for from repository b, which is not in use or no longer offers it: upgrade leaves it\n"},
		{"offered info", func(b io.Writer) error {
			return Info{Name: "jq", Version: "1.7", Depends: []string{"onig>=6"}, ArchiveSize: 2048, SHA256: "ab", Versions: []string{"1.7", "1.6"}}.WriteText(b, " (tip)")
		}, "name:      jq\nversion:   1.7\ndepends:   onig>=6\ndownload:  2.0 KiB\nsha256:    ab\ninstalled: no (tip)\nversions:  1.7, 1.6\n"},
		{"offered info with relations", func(b io.Writer) error {
			return Info{Name: "zlib1g", Version: "1", Depends: []string{"libc6>=2.14", "debconf>=0.5|debconf-2.0"}, Provides: []string{"libz1"},
				Conflicts: []string{"zlib1<=1:1.0.4-7"}, Replaces: []string{"zlib1"}, SHA256: "ab"}.WriteText(b, "")
		}, "name:      zlib1g\nversion:   1\ndepends:   libc6>=2.14, debconf>=0.5|debconf-2.0\nprovides:  libz1\nconflicts: zlib1<=1:1.0.4-7\nreplaces:  zlib1\nsha256:    ab\ninstalled: no\nversions:  \n"},
		{"why unneeded", func(b io.Writer) error { return Why{Name: "onig", Version: "6"}.WriteText(b, " (tip)") },
			"onig 6 was not asked for and no installed package needs it (tip)\n"},
		{"why needed", func(b io.Writer) error {
			return Why{Name: "onig", Version: "6", NeededBy: []string{"jq"}, Chains: [][]string{{"jq", "onig"}}}.WriteText(b, " (tip)")
		}, "onig 6 is needed by jq\n  jq -> onig\n"},
		{"plan", func(b io.Writer) error { return WritePlan(b, &plan, "install") },
			"install hello 1.2.0 (requested; 2.0 KiB to download)\nupgrade libgreet 1.0 to 1.1 (dependency of hello)\njq 1.7 is already installed\n" +
				"dry run: 2 changes, 2.0 KiB to download, 4.0 KiB of disk space freed; nothing was changed\n"},
		{"plan asking for a dependency", func(b io.Writer) error {
			return WritePlan(b, &txn.Plan{Unchanged: []txn.Change{{Action: txn.Keep, Name: "libssl3", Version: "3.0", Why: "requested", WasDependency: true}}}, "install")
		}, "libssl3 3.0 is already installed, as a dependency: the install would record it as asked for, so autoremove would keep it\n" +
			"dry run: 0 changes, 0 B to download, 0 B more disk space; nothing was changed\n"},
		{"plan keeping a local archive's package", func(b io.Writer) error {
			return WritePlan(b, &txn.Plan{Held: []txn.Held{{Name: "tool", From: "1.0", Version: "1.0", Newest: "2.0", Origin: "/home/me/tool-1.0.tar.gz"}}}, "upgrade")
		}, "keep tool at 1.0: installed from the local archive file /home/me/tool-1.0.tar.gz (newest 2.0)\n" +
			"dry run: 0 changes, 0 B to download, 0 B more disk space; nothing was changed\n"},
		{"plan keeping npm packages beside newer ones", func(b io.Writer) error {
			return WritePlan(b, &txn.Plan{Held: []txn.Held{
				{Name: "debug", From: "3.2.7", Version: "3.2.7", Newest: "4.4.3", Beside: "4.4.3"},
				{Name: "ms", From: "2.0.0", Version: "2.0.0", Newest: "2.1.3", Detail: repo.Held{Package: repo.Package{Name: "ms", Version: "2.0.0"}, Newest: "2.1.3",
					LedBy: []repo.Dependent{{Requirement: repo.Requirement{Name: "ms", Constraints: []repo.Constraint{{Op: "=", Version: "2.0.0"}}}, By: "debug 2.6.9"}}}},
				{Name: "semver", From: "6.3.2", Version: "6.3.2", Newest: "7.8.6", Beside: "7.8.6"}}}, "upgrade")
		}, "keep ms at 2.0.0: debug 2.6.9 depends on ms=2.0.0 (newest 2.1.3)\n" +
			"2 npm packages stay at the versions their dependents' ranges allow, newer versions of their names installed beside them for other packages\n" +
			"dry run: 0 changes, 0 B to download, 0 B more disk space; nothing was changed\n"},
	} {
		var b strings.Builder
		if err := tt.write(&b); err != nil || b.String() != tt.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tt.name, err, b.String(), tt.want)
		}
	}
}
