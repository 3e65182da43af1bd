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

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""}, {"512", 512, ""}, {"10GiB", 10 << 30, ""}, {"1.5 KiB", 1536, ""},
		{"500MB", 500e6, ""}, {"2kB", 2000, ""}, {"7B", 7, ""},
		{"", 0, `size "": want a number and a unit, such as 20GiB or 500MB`},
		{"10 gigs", 0, `size "10 gigs": want a number and a unit, such as 20GiB or 500MB`},
		{"NaN", 0, `size "NaN": want a number and a unit, such as 20GiB or 500MB`},
		{"-1GiB", 0, `size "-1GiB" is negative`},
		{"9000000TiB", 0, `size "9000000TiB" is too large`},
	} {
		got, err := ParseSize(tc.in)
		if gotErr := errString(err); got != tc.want || gotErr != tc.wantErr {
			t.Errorf("ParseSize(%q) = %d, %q; want %d, %q", tc.in, got, gotErr, tc.want, tc.wantErr)
		}
	}
}

func TestParseDuration(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"30d", 30 * day, ""}, {"0d", 0, ""}, {"720h", 720 * time.Hour, ""}, {"1d12h", day + 12*time.Hour, ""},
		{"90m", 90 * time.Minute, ""}, {"0", 0, ""},
		{"a month", 0, `duration "a month": want 30d, 720h or the like`},
		{"1.5d", 0, `duration "1.5d": want whole days, such as 30d`},
		{"d", 0, `duration "d": want whole days, such as 30d`},
		{"-1d", 0, `duration "-1d": want whole days, such as 30d`},
		{"-5h", 0, `duration "-5h" is negative`},
		{"1d-5h", 0, `duration "1d-5h" is negative`},
		{"1dh", 0, `duration "1dh": want 30d, 720h or the like`},
		{"", 0, `duration "": want 30d, 720h or the like`},
	} {
		got, err := ParseDuration(tc.in)
		if gotErr := errString(err); got != tc.want || gotErr != tc.wantErr {
			t.Errorf("ParseDuration(%q) = %v, %q; want %v, %q", tc.in, got, gotErr, tc.want, tc.wantErr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
