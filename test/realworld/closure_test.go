package realworld

import (
	"slices"
	"testing"
)

// TestParseDepends reads apt-cache depends' output, alternatives and virtual packages
// included (libpam-runtime's, Debian 12), and picks of each group what a resolver trying
// alternatives in order takes.
func TestParseDepends(t *testing.T) {
	const out = `libpam-runtime
 |Depends: debconf
  Depends: <debconf-2.0>
    cdebconf
    debconf
  Depends: libpam-modules
libpam-modules
  PreDepends: libc6
 |PreDepends: <awk>
    mawk
  PreDepends: gawk:any
  PreDepends: <only-virtual>
    provider
debconf
`
	deps, err := parseDepends(out)
	if err != nil {
		t.Fatal(err)
	}
	picks := map[string][]string{}
	for name, groups := range deps {
		for _, g := range groups {
			picks[name] = append(picks[name], g.pick())
		}
	}
	want := map[string][]string{
		"libpam-runtime": {"debconf", "libpam-modules"},
		"libpam-modules": {"libc6", "gawk", "provider"},
	}
	for name, w := range want {
		if !slices.Equal(picks[name], w) {
			t.Errorf("%s: picked %v, want %v", name, picks[name], w)
		}
	}
	if len(picks) != len(want) {
		t.Errorf("picks %v, want %v", picks, want)
	}

	for _, bad := range []string{" |Depends: a\n", "p\n |Depends: a\n", "p\n  Depends: a\n    b\n", "p\n  Depends a\n"} {
		if _, err := parseDepends(bad); err == nil {
			t.Errorf("parseDepends(%q): no error", bad)
		}
	}
}
