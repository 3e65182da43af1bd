package units

import (
	"math"
	"testing"
	"time"
)

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}, {math.MaxInt64, "8.0 EiB"},
	} {
		if got := Size(tc.n); got != tc.want {
			t.Errorf("Size(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}} {
		if got := Count(tc.n, "file"); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestDurations checks both wordings of a duration: to three digits, and roughly.
func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(time.Duration) string
		d    time.Duration
		want string
	}{
		{"Duration", Duration, 500 * time.Nanosecond, "500ns"},
		{"Duration", Duration, 1234567 * time.Nanosecond, "1.23ms"},
		{"Duration", Duration, 6012345678 * time.Nanosecond, "6.01s"},
		{"Duration", Duration, 90 * time.Second, "1m30s"},
		{"Roughly", Roughly, 10 * time.Second, "a minute"},
		{"Roughly", Roughly, 5 * time.Minute, "5 minutes"},
		{"Roughly", Roughly, 3 * time.Hour, "3 hours"},
		{"Roughly", Roughly, 72 * time.Hour, "3 days"},
	} {
		if got := tc.fn(tc.d); got != tc.want {
			t.Errorf("%s(%v) = %q, want %q", tc.name, tc.d, got, tc.want)
		}
	}
}
