package publish

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"pkg/fetch"
	"pkg/internal/parallel"
	"pkg/internal/regfile"
)

// ErrNotInNPMCache is a tarball an offline import needs that npm's cache lacks.
var ErrNotInNPMCache = errors.New("publish: offline, and not in npm's cache")

// NPMCache returns npm's cache directory as npm finds it without a configuration file:
// $npm_config_cache (npm takes its settings from such variables), else ~/.npm.
func NPMCache() string {
	for _, v := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if dir := os.Getenv(v); dir != "" {
			return dir
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".npm")
}

// NPMRegistry returns the npm registry a lock's package without a resolved URL comes
// from: $npm_config_registry, else npm's own, https://registry.npmjs.org/.
func NPMRegistry() string {
	for _, v := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if r := os.Getenv(v); r != "" {
			return r
		}
	}
	return "https://registry.npmjs.org/"
}

// cachedPath returns where the npm cache dir holds the bytes whose sha512 is sum: its
// content-addressed store (cacache's content-v2 in dir/_cacache), as npm 5 and later
// write it. A dir that is that store's own directory (~/.npm/_cacache, holding
// content-v2) is taken as well.
func cachedPath(dir string, sum []byte) string {
	h := hex.EncodeToString(sum)
	if fi, err := os.Stat(filepath.Join(dir, "content-v2")); err != nil || !fi.IsDir() {
		dir = filepath.Join(dir, "_cacache")
	}
	return filepath.Join(dir, "content-v2", "sha512", h[:2], h[2:4], h[4:])
}

// An integrityError is a tarball whose bytes are not those its lock's integrity names.
type integrityError struct {
	Name, Version string
	From          string // the URL it was downloaded from
	Want, Got     string // the integrity the lock names; sha512-BASE64 of the bytes
}

func (e *integrityError) Error() string {
	return fmt.Sprintf("%s %s from %s: integrity is %s, the bytes have %s", e.Name, e.Version, e.From, e.Want, e.Got)
}

func (e *integrityError) Is(target error) bool { return target == ErrNPMIntegrity }

// A gotTarball is a tarball of a lock, in a local file whose bytes its integrity names.
type gotTarball struct {
	Path    string
	From    string // the URL it was downloaded from, or "" for a local file
	cleanup func()
}

// npmFetcher gets the tarballs of a lock: each from npm's cache (Cache, "" for none), else
// from the repository's own archive of it (Have, by name@version: a local file), else,
// unless Offline, downloaded from its resolved URL; Jobs at once.
type npmFetcher struct {
	Cache   string
	Have    map[string]string
	Offline bool
	Jobs    int
}

// getAll gets every tarball of ts, in their order: all or, with an error, none (those
// downloaded removed). The local files are looked at first, in order, so that an offline
// fetcher names the first tarball it lacks.
func (f npmFetcher) getAll(ctx context.Context, ts []lockTarball) ([]gotTarball, error) {
	got := make([]gotTarball, len(ts))
	var missing []int
	for i, t := range ts {
		if p, ok := f.local(t); ok {
			got[i] = gotTarball{Path: p, cleanup: func() {}}
			continue
		}
		if f.Offline {
			return nil, &NPMLockError{Key: t.Key, Err: fmt.Errorf("%w: %s %s (%s) is in neither %s nor the repository", ErrNotInNPMCache, t.Name, t.Version, t.Integrity, f.Cache)}
		}
		missing = append(missing, i)
	}
	if err := f.downloadAll(ctx, ts, missing, got); err != nil {
		removeGot(got)
		return nil, err
	}
	return got, nil
}

// downloadAll downloads ts[i] into got[i] for each i of missing, Jobs at once, stopping
// at the first error.
func (f npmFetcher) downloadAll(ctx context.Context, ts []lockTarball, missing []int, got []gotTarball) error {
	return parallel.Each(ctx, len(missing), f.Jobs, func(ctx context.Context, k int) error {
		i := missing[k]
		var err error
		got[i], err = download(ctx, ts[i])
		return err
	})
}

func removeGot(got []gotTarball) {
	for _, g := range got {
		if g.cleanup != nil {
			g.cleanup()
		}
	}
}

// local returns the file of npm's cache, else of the repository, that holds t's bytes.
// A missing or damaged file is passed over, as npm passes over a damaged one of its cache.
func (f npmFetcher) local(t lockTarball) (string, bool) {
	var files []string
	if f.Cache != "" {
		for _, sum := range t.SHA512 {
			files = append(files, cachedPath(f.Cache, sum))
		}
	}
	if p, ok := f.Have[t.Name+"@"+t.Version]; ok {
		files = append(files, p)
	}
	for _, p := range files {
		if got, err := sha512File(p); err == nil && t.allows(got) {
			return p, true
		}
	}
	return "", false
}

// download downloads t from its resolved URL (fetch.Local) and checks its integrity.
func download(ctx context.Context, t lockTarball) (gotTarball, error) {
	p, _, cleanup, err := fetch.Local(ctx, t.Resolved)
	if err != nil {
		return gotTarball{}, &NPMLockError{Key: t.Key, Err: err}
	}
	got, err := sha512File(p)
	if err == nil && !t.allows(got) {
		err = &integrityError{Name: t.Name, Version: t.Version, From: t.Resolved, Want: t.Integrity, Got: integrityText([][]byte{got})}
	}
	if err != nil {
		cleanup()
		return gotTarball{}, &NPMLockError{Key: t.Key, Err: err}
	}
	return gotTarball{Path: p, From: t.Resolved, cleanup: cleanup}, nil
}

// allows reports whether the sha512 digest sum is one t's integrity allows.
func (t lockTarball) allows(sum []byte) bool {
	return slices.ContainsFunc(t.SHA512, func(s []byte) bool { return slices.Equal(s, sum) })
}

// sha512File returns the sha512 of the regular file name.
func sha512File(name string) ([]byte, error) {
	f, err := regfile.Open(name, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
