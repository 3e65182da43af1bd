package units

import (
	"errors"
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
		wantErr error
	}{
		{"0", 0, nil}, {"512", 512, nil}, {"10GiB", 10 << 30, nil}, {"1.5 KiB", 1536, nil},
		{"500MB", 500e6, nil}, {"2kB", 2000, nil}, {"7B", 7, nil},
		{"", 0, ErrSyntax},
		{"10 gigs", 0, ErrSyntax},
		{"NaN", 0, ErrSyntax},
		{"-1GiB", 0, ErrNegative},
		{"9000000TiB", 0, ErrRange},
	} {
		got, err := ParseSize(tc.in)
		if got != tc.want || !sameError(err, tc.wantErr, "size", tc.in) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseDuration(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr error
	}{
		{"30d", 30 * day, nil}, {"0d", 0, nil}, {"720h", 720 * time.Hour, nil}, {"1d12h", day + 12*time.Hour, nil},
		{"90m", 90 * time.Minute, nil}, {"0", 0, nil},
		{"a month", 0, ErrSyntax},
		{"1.5d", 0, ErrSyntax},
		{"d", 0, ErrSyntax},
		{"-1d", 0, ErrSyntax},
		{"-5h", 0, ErrNegative},
		{"1d-5h", 0, ErrNegative},
		{"1dh", 0, ErrSyntax},
		{"", 0, ErrSyntax},
	} {
		got, err := ParseDuration(tc.in)
		if got != tc.want || !sameError(err, tc.wantErr, "duration", tc.in) {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// sameError reports whether err is want (both nil, or err matching want and refusing
// value, a size or duration as what says).
func sameError(err, want error, what, value string) bool {
	if want == nil {
		return err == nil
	}
	pe := (*parseError)(nil)
	return errors.Is(err, want) && errors.As(err, &pe) && pe.what == what && pe.value == value
}

func TestSome(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	for _, tc := range []struct {
		n, most int
		want    string
	}{
		{0, 3, ""},
		{1, 3, "a"},
		{2, 3, "a and b"},
		{3, 3, "a, b and c"},
		{4, 3, "a, b, c and d"},
		{5, 3, "a, b, c and 2 more"},
		{2, 0, "2 more"},
		{1, 0, "a"},
	} {
		if got := Some(names[:tc.n], tc.most); got != tc.want {
			t.Errorf("Some(%q, %d) = %q, want %q", names[:tc.n], tc.most, got, tc.want)
		}
	}
}

func TestListSemicolons(t *testing.T) {
	for _, tc := range []struct {
		items []string
		more  int
		want  string
	}{
		{[]string{"x is locked and not required"}, 0, "x is locked and not required"},
		{[]string{"x is locked and not required", "y"}, 0, "x is locked and not required; and y"},
		{[]string{"x is at 1, the index has 2", "y"}, 3, "x is at 1, the index has 2; y; and 3 more"},
		{[]string{"a", "b"}, 1, "a, b and 1 more"},
		{[]string{"a>=1,<2", "b"}, 0, "a>=1,<2 and b"},
		{[]string{"a 1 (through b 1, c 1 and d 1)", "e 1"}, 2, "a 1 (through b 1, c 1 and d 1), e 1 and 2 more"},
	} {
		if got := List(tc.items, tc.more); got != tc.want {
			t.Errorf("List(%q, %d) = %q, want %q", tc.items, tc.more, got, tc.want)
		}
	}
}
