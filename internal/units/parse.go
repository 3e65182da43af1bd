package units

import (
	"errors"
	"fmt"
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

// parseError is an error worded in full that errors.Is matches to its reason.
type parseError struct {
	msg    string
	reason error
}

func (e *parseError) Error() string        { return e.msg }
func (e *parseError) Is(target error) bool { return target == e.reason }

func refuse(reason error, format string, args ...any) error {
	return &parseError{msg: fmt.Sprintf(format, args...), reason: reason}
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
		return 0, refuse(ErrSyntax, "size %q: want a number and a unit, such as 20GiB or 500MB", s)
	case n < 0:
		return 0, refuse(ErrNegative, "size %q is negative", s)
	case n*mult >= math.MaxInt64:
		return 0, refuse(ErrRange, "size %q is too large", s)
	}
	return int64(n * mult), nil
}

// ParseDuration reads a length of time as time.ParseDuration does, after a whole number of
// days, if any: "30d", "1d12h", "720h".
func ParseDuration(s string) (time.Duration, error) {
	bad := refuse(ErrSyntax, "duration %q: want 30d, 720h or the like", s)
	var d time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, refuse(ErrSyntax, "duration %q: want whole days, such as 30d", s)
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
		return 0, refuse(ErrNegative, "duration %q is negative", s)
	case v > math.MaxInt64-d:
		return 0, refuse(ErrRange, "duration %q is too long", s)
	}
	return d + v, nil
}
