package units

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Reasons ParseSize and ParseDuration refuse a value, which their errors match
// with errors.Is; the errors say in full what was given and what is wanted.
var (
	ErrSyntax   = errors.New("units: not a size or duration as written")
	ErrNegative = errors.New("units: negative")
	ErrRange    = errors.New("units: too large")
)

// parseError is an error worded in full that errors.Is matches to its reason, refusing
// value, a size or a duration.
type parseError struct {
	what, value string // "size" or "duration", and the text refused
	msg         string
	reason      error
}

func (e *parseError) Error() string        { return e.msg }
func (e *parseError) Is(target error) bool { return target == e.reason }

// refuse refuses value, a size or duration as what says, for reason; rest words the
// rest after what and the quoted value.
func refuse(reason error, what, value, rest string) error {
	return &parseError{what: what, value: value, msg: what + " " + strconv.Quote(value) + rest, reason: reason}
}

var sizeUnits = []struct {
	suffix string
	n      float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseSize reads a number of bytes, written as a number with an optional unit: B, kB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024): "20GiB", "500MB".
func ParseSize(s string) (int64, error) {
	v := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(num), u.n
			break
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || math.IsNaN(n) || math.IsInf(n, 0):
		return 0, refuse(ErrSyntax, "size", s, ": want a number and a unit, such as 20GiB or 500MB")
	case n < 0:
		return 0, refuse(ErrNegative, "size", s, " is negative")
	case n*mult >= math.MaxInt64:
		return 0, refuse(ErrRange, "size", s, " is too large")
	}
	return int64(n * mult), nil
}

// ParseDuration reads a length of time as time.ParseDuration does, after a whole number of
// days, if any: "30d", "1d12h", "720h".
func ParseDuration(s string) (time.Duration, error) {
	bad := refuse(ErrSyntax, "duration", s, ": want 30d, 720h or the like")
	var d time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, refuse(ErrSyntax, "duration", s, ": want whole days, such as 30d")
		}
		d, rest = time.Duration(n)*24*time.Hour, s[i+1:]
		if rest == "" {
			return d, nil
		}
	}
	v, err := time.ParseDuration(rest)
	switch {
	case err != nil:
		return 0, bad
	case v < 0:
		return 0, refuse(ErrNegative, "duration", s, " is negative")
	case v > math.MaxInt64-d:
		return 0, refuse(ErrRange, "duration", s, " is too long")
	}
	return d + v, nil
}
