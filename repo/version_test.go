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
		{"1.0-1", "1.0-rc1", -1},     // digits before letters
		{"1.0-rc1", "1.0.1-rc1", -1}, // releases compare first
		{"0.9", "1.0-rc1", -1},
		{"1.0", "1.0a", -1},
		{"1.0a", "1.0b", -1},
		{"1.0", "1.0+b1", -1},
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
		{"v1", false},
		{".1", false},
		{"1 2", false},
		{"1_0", false},
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
