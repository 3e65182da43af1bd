package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/repo"
	"pkg/trust"
)

func checkName(name string) error {
	if !repo.ValidRepoName(name) {
		return fmt.Errorf("bad repository name %.40q (want [a-z0-9][a-z0-9._+-]*)", name)
	}
	return nil
}

// location is a repository's URL as the configuration gives it: an http(s) or oci URL
// with a host, a file URL or an absolute path. A relative path is refused: relative to what
// would depend on where pkg runs. (A struct: the decoder sets a string kind as it is,
// without calling UnmarshalText.)
type location struct{ s string }

func (l *location) UnmarshalText(text []byte) error {
	s := string(text)
	shown := termtext.WithoutCredentials(s)
	u, err := url.Parse(s)
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "oci" || u.Scheme == "oci+http" || u.Scheme == "oci+https"):
		if u.Host == "" {
			return fmt.Errorf("URL %q has no host", shown)
		}
	case err == nil && u.Scheme == "file":
		if !strings.HasPrefix(u.Path, "/") || u.Host != "" {
			return fmt.Errorf("URL %q is not file:///ABSOLUTE/PATH", shown)
		}
	case filepath.IsAbs(s):
	case err == nil && len(u.Scheme) > 1:
		return fmt.Errorf("URL %q: scheme %q is not supported (want http, https, oci or file)", shown, u.Scheme)
	default:
		return fmt.Errorf("%q is neither an http(s) or file URL nor an absolute path", shown)
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

// size is a number of bytes, as units.ParseSize reads it: "20GiB", "500MB".
type size struct{ n int64 }

func (s *size) UnmarshalText(text []byte) (err error) {
	s.n, err = units.ParseSize(string(text))
	return err
}

// duration is a length of time as units.ParseDuration reads it: "720h", "30d".
type duration struct{ d time.Duration }

func (d *duration) UnmarshalText(text []byte) (err error) {
	d.d, err = units.ParseDuration(string(text))
	return err
}
