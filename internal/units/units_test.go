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

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{500 * time.Nanosecond, "500ns"}, {1234567 * time.Nanosecond, "1.23ms"},
		{6012345678 * time.Nanosecond, "6.01s"}, {90 * time.Second, "1m30s"},
	} {
		if got := Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestRoughly(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "a minute"}, {5 * time.Minute, "5 minutes"},
		{3 * time.Hour, "3 hours"}, {72 * time.Hour, "3 days"},
	} {
		if got := Roughly(tc.d); got != tc.want {
			t.Errorf("Roughly(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
