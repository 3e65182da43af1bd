package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pkg/repo"
	"pkg/trust"
)

func checkName(name string) error {
	if !repo.ValidName(name) {
		return fmt.Errorf("bad repository name %.40q (want [a-z0-9][a-z0-9._+-]*)", name)
	}
	return nil
}

// location is a repository's URL as the configuration gives it: an http(s) URL with a
// host, a file URL or an absolute path. A relative path is refused: relative to what
// would depend on where pkg runs. (A struct: the decoder sets a string kind as it is,
// without calling UnmarshalText.)
type location struct{ s string }

func (l *location) UnmarshalText(text []byte) error {
	s := string(text)
	u, err := url.Parse(s)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		if u.Host == "" {
			return fmt.Errorf("URL %q has no host", s)
		}
	case err == nil && u.Scheme == "file":
		if !strings.HasPrefix(u.Path, "/") || u.Host != "" {
			return fmt.Errorf("URL %q is not file:///ABSOLUTE/PATH", s)
		}
	case filepath.IsAbs(s):
	case err == nil && len(u.Scheme) > 1:
		return fmt.Errorf("URL %q: scheme %q is not supported (want http, https or file)", s, u.Scheme)
	default:
		return fmt.Errorf("%q is neither an http(s) or file URL nor an absolute path", s)
	}
	l.s = s
	return nil
}

// key is a trusted key as pkg trust add takes it: [REPO=]pkg-ed25519:<base64>.
type key struct{ s string }

func (k *key) UnmarshalText(text []byte) error {
	if _, err := trust.ParsePublicKey(string(text)); err != nil {
		return err
	}
	k.s = string(text)
	return nil
}

// size is a number of bytes, written as a number with an optional unit: B, kB, MB, GB,
// TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024): "20GiB", "500MB".
type size struct{ n int64 }

var sizeUnits = []struct {
	suffix string
	n      float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

func (s *size) UnmarshalText(text []byte) error {
	v := strings.TrimSpace(string(text))
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
		return fmt.Errorf("size %q: want a number and a unit, such as 20GiB or 500MB", text)
	case n < 0:
		return fmt.Errorf("size %q is negative", text)
	case n*mult >= math.MaxInt64:
		return fmt.Errorf("size %q is too large", text)
	}
	s.n = int64(n * mult)
	return nil
}

// duration is a length of time as Go's time.ParseDuration reads it, or a whole number of
// days: "720h", "30d".
type duration struct{ d time.Duration }

func (d *duration) UnmarshalText(text []byte) error {
	s := string(text)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return fmt.Errorf("duration %q: want whole days, such as 30d", s)
		}
		d.d = time.Duration(n) * 24 * time.Hour
		return nil
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Errorf("duration %q: want 30d, 720h or the like", s)
	case v < 0:
		return errors.New("duration " + strconv.Quote(s) + " is negative")
	}
	d.d = v
	return nil
}
