package repo

import (
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0", 0},
		{"1.9", "1.10", -1},         // segments compare numerically
		{"2", "10", -1},             // multi-digit
		{"1.0", "1.0.1", -1},        // a missing segment is less
		{"1", "1.0", -1},            // even a zero one
		{"1.0-rc1", "1.0", -1},      // a pre-release precedes its release
		{"1.0~rc1", "1.0", -1},      // "~" too
		{"1.0-rc2", "1.0-rc10", -1}, // digit runs inside a segment
		{"1.0-alpha", "1.0-beta", -1},
		{"1.0-rc1", "1.0-rc1.1", -1},
		{"1.0-rc1", "1.0-1", -1},     // "-" and a digit: a revision, after its release
		{"1.0-rc1", "1.0.1-rc1", -1}, // releases compare first
		{"0.9", "1.0-rc1", -1},
		{"1.0", "1.0a", -1},
		{"1.0a", "1.0b", -1},
		{"1.0", "1.0+b1", -1},
		{"1.0+b1", "1.0.1", -1}, // "+" before a longer release
		{"v1.2", "1.2", 1},      // "v" ignored, then bytewise
		{"0:1.2", "1.2", -1},    // epoch 0 is none
		{"1.0-rc1", "1.0_rc1", -1},
		{"1.09", "1.9", -1}, // equal value, different spelling: bytewise
		{"1.0-rc1", "1.0~rc1", -1},
		{"1.2.3", "1.2.3", 0},
		{"20240101", "20231231", 1},
		{"1." + strings.Repeat("9", 40), "1." + strings.Repeat("9", 39), 1}, // beyond uint64
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := CompareVersions(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

// TestVersionOrder lists versions as each ecosystem writes them, each chain in the order
// its ecosystem sorts them, and checks every pair.
func TestVersionOrder(t *testing.T) {
	chains := map[string][]string{
		"git tags": {"v0.9", "v1.0-rc1", "v1.0", "v1.2", "v1.2.1", "v1.10", "v2"},
		"debian": {
			"1.0~~", "1.0~~a", "1.0~", "1.0", // dpkg's own example of "~"
			"1.6~rc1-1", "1.6-1~bpo11+1", "1.6-1", "1.6-1+deb12u1", "1.6-2", "1.6-2.1",
			"1.6-2.1+deb12u3", "1.6-10", "1.6+dfsg-1", "1.6.1-1", "2.39.5-0+deb12u3",
			"1:0.1-1", "1:2.39.5-0+deb12u2", "1:2.39.5-0+deb12u3", "1:2.39.5-1", "2:0.1",
		},
		"semver": { // semver.org's precedence example, then build metadata
			"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
			"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.0+build.1", "1.0.1",
		},
		"underscore":         {"1.0_alpha", "1.0_beta", "1.0_beta2", "1.0_rc1", "1.0", "1.0_1", "1.0.1"},
		"packaging revision": {"6.9.8", "6.9.8+1", "6.9.8+2", "6.9.8.1", "6.9.9"},
		"mixed":              {"1.6-rc1", "1.6~rc2", "1.6_rc3", "1.6", "1.6-1", "v1.6.1", "1.7"},
	}
	for name, vs := range chains {
		for i, a := range vs {
			if err := checkVersion(a); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			for j, b := range vs {
				if got, want := CompareVersions(a, b), cmpInt(i, j); got != want {
					t.Errorf("%s: CompareVersions(%q, %q) = %d, want %d", name, a, b, got, want)
				}
			}
		}
	}
}

func cmpInt(i, j int) int {
	switch {
	case i < j:
		return -1
	case i > j:
		return 1
	}
	return 0
}

func TestPreRelease(t *testing.T) {
	tests := []struct {
		v, release string
		ok         bool
	}{
		{"2.0-rc1", "2.0", true},
		{"2.0~beta", "2.0", true},
		{"1.0_beta", "1.0", true},
		{"v2.0-rc.1", "v2.0", true},
		{"1:2.0~rc1-1", "1:2.0", true},
		{"1.0.0-alpha-1", "1.0.0", true},
		{"1.6-2", "", false},              // a Debian revision
		{"1.6-2.1+deb12u3", "", false},    //
		{"1:2.39.5-0+deb12u3", "", false}, // with an epoch
		{"1.6-1~bpo11+1", "", false},      // a backport sorts before 1.6-1, but is a release of 1.6
		{"1.0_1", "", false},
		{"6.9.8+1", "", false},
		{"v1.2", "", false},
	}
	for _, tt := range tests {
		rel, ok := PreRelease(tt.v)
		if rel != tt.release || ok != tt.ok {
			t.Errorf("PreRelease(%q) = %q, %v; want %q, %v", tt.v, rel, ok, tt.release, tt.ok)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	tests := []struct {
		v  string
		ok bool
	}{
		{"1", true},
		{"1.2.3-rc1+build.5~x", true},
		{"0", true},
		{"1" + strings.Repeat("0", 63), true},
		{"1" + strings.Repeat("0", 64), false},
		{"", false},
		{"v1", true},
		{"v1.2.3-rc1", true},
		{"1:2.39.5-0+deb12u3", true},
		{"12:1", true},
		{"1.0_beta", true},
		{"V1", false},
		{"v", false},
		{"vv1", false},
		{":1", false},
		{"1:", false},
		{"1:2:3", false},
		{"1.0:1", false},
		{"a:1", false},
		{".1", false},
		{"1 2", false},
		{"1,2", false},
		{"1/2", false},
	}
	for _, tt := range tests {
		if err := checkVersion(tt.v); (err == nil) != tt.ok {
			t.Errorf("checkVersion(%q) = %v, want ok %v", tt.v, err, tt.ok)
		}
	}
}

func FuzzCompareVersions(f *testing.F) {
	f.Add("1.0", "1.0.1", "1.0-rc1")
	f.Add("1.9", "1.10", "1.09")
	f.Add("1.0~rc1", "1.0-rc1", "1.0a")
	f.Add("2", "10", "5a")
	f.Add("1:2.39.5-0+deb12u3", "1.6-2.1+deb12u3", "v1.6~rc1-1")
	f.Add("1.0~~", "1.0_beta", "1.6+dfsg-1")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if got := CompareVersions(a, a); got != 0 {
			t.Fatalf("CompareVersions(%q, %q) = %d, want 0", a, a, got)
		}
		ab, ba := CompareVersions(a, b), CompareVersions(b, a)
		if ab != -ba {
			t.Fatalf("CompareVersions(%q, %q) = %d but reversed = %d", a, b, ab, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("CompareVersions(%q, %q) = %d", a, b, ab)
		}
		if ab <= 0 && CompareVersions(b, c) <= 0 && CompareVersions(a, c) > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q but %q > %q", a, b, c, a, c)
		}
	})
}
