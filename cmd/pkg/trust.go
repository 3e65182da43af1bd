package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/config"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/units"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// trustPolicy returns the keys pkg trusts, from --trusted-key, PKG_TRUSTED_KEYS and the
// root's trusted-keys file, and whether it requires signatures (txn.Policy).
func trustPolicy(c *cli.Context) (trust.Policy, error) {
	sources, err := keySources(c)
	return txn.Policy(sources, c.Bool("require-signed")), err
}

// keySources returns the trusted keys of each source.
func keySources(c *cli.Context) ([]txn.KeySource, error) {
	flag, err := txn.ParseKeySource("--trusted-key", c.StringSlice("trusted-key")...)
	if err != nil {
		return nil, globalUsagef("%v", err)
	}
	env, err := txn.ParseKeySource("PKG_TRUSTED_KEYS", os.Getenv("PKG_TRUSTED_KEYS"))
	if err != nil {
		return nil, err
	}
	file, err := txn.RootKeys(c.String("root"))
	return []txn.KeySource{flag, env, file}, err
}

// openFetcher opens the cache and reads the index of each repository in effect for the
// root (txn.ReadIndex, repositories), warning about an index it could not verify, and
// returns them as one (txn.Merge) and a fetcher of their packages. For a
// dry run, it changes nothing in the cache: it keeps no copy of the index read, and reads
// a cache that does not exist yet as an empty one.
//
// Only install and upgrade record an index in the root. That is enough: search, fetch and
// lock install nothing, and cached archives are named by sha256; sync installs by the
// lockfile's sha256s, whatever the index says.
func openFetcher(c *cli.Context, dry bool) (*txn.Fetcher, *txn.Index, error) {
	obs := &progress{c: c}
	rs, err := repositories(c)
	if err != nil {
		return nil, nil, err
	}
	if len(rs) == 0 {
		return nil, nil, errNoRepo
	}
	cache, err := openCacheFor(c, dry)
	if err != nil {
		return nil, nil, err
	}
	var ixs []*txn.Index
	for _, r := range rs {
		_, o, err := repoSource(c, r, obs.retrying)
		if err != nil {
			return nil, nil, err
		}
		ix, err := txn.ReadIndex(c.Context, cache, c.String("root"), rootOptions(c), r.URLs[0], o)
		if err != nil {
			return nil, nil, err
		}
		ix.Name = r.Name
		if ix.NotKept != nil {
			warn(c, "%s; --offline will not have it", ix.NotKept)
		}
		warnIndex(c, ix.Trust)
		if t, ok := cache.IndexTime(ix.Source); ok && c.Bool("offline") {
			// What offline installs, locks and --frozen checks are as current as.
			note(c, "offline: using the index of %s as last read %s (%s ago)", ix.Source.URL(), t.Local().Format("2006-01-02 15:04"), units.Roughly(time.Since(t)))
		}
		ixs = append(ixs, ix)
	}
	ix, err := txn.Merge(ixs)
	if err != nil {
		return nil, nil, err
	}
	f := newFetcher(c, obs, ix.Source, cache)
	f.Sources = ix.Sources()
	return f, ix, nil
}

// newFetcher returns a fetcher from src into cache, reporting to obs.
func newFetcher(c *cli.Context, obs *progress, src *fetch.Source, cache *fetch.Cache) *txn.Fetcher {
	f := &txn.Fetcher{Source: src, Jobs: c.Int("jobs"), Offline: c.Bool("offline"), Observer: obs}
	f.UseCache(cache, c.Duration("lock-timeout"))
	cache.NoSync = c.Bool("no-sync")
	return f
}

// openRootFor takes the root's lock for a command that read the index ix and returns the
// root, and f and ix, or those of the index read again if ix is stale.
func openRootFor(c *cli.Context, f *txn.Fetcher, ix *txn.Index) (*install.Root, *txn.Fetcher, *txn.Index, error) {
	root, err := openRoot(c)
	if err != nil {
		return nil, nil, nil, err
	}
	if stale, err := ix.Stale(root); err != nil || stale {
		if err == nil {
			f, ix, err = openFetcher(c, false)
		}
		if err != nil {
			root.Close()
			return nil, nil, nil, err
		}
	}
	return root, f, ix, nil
}

// checkLockSigned checks that the lockfile says it was made from an index a key trusted
// here verified, where signatures are required (txn.CheckLockSigned).
func checkLockSigned(c *cli.Context, l *repo.Lock, path string) error {
	global, err := trustPolicy(c)
	if err != nil {
		return err
	}
	srcs, rs, err := lockSources(c, l)
	for name, src := range srcs {
		r, _ := l.Of(name)
		var policy trust.Policy
		if policy, err = rs[name].Trust(global); err == nil {
			_, err = txn.CheckLockSigned(r.Index, path, policy, c.String("root"), rootOptions(c), src.URL())
		}
		if err != nil {
			break
		}
	}
	return err
}

// lockSources returns the source of each repository of the lockfile l a sync installs
// from, by the name its packages give (config.LockUses), and the repository each is.
func lockSources(c *cli.Context, l *repo.Lock) (map[string]*fetch.Source, map[string]config.Repo, error) {
	rs, err := repositories(c)
	if err != nil {
		return nil, nil, err
	}
	srcs, used, obs := make(map[string]*fetch.Source), config.LockUses(l, rs), &progress{c: c}
	for name, r := range used {
		if srcs[name], _, err = repoSource(c, r, obs.retrying); err != nil {
			return nil, nil, err
		}
	}
	return srcs, used, nil
}

// warnIndex prints one line about an index that is not verified, or verified but
// expired, and a hint for the first, once per root until that changes (tellOnce). It
// warns under --quiet too, as it is about what pkg trusts; an unsigned local directory
// is only a note: no one stands between it and pkg.
func warnIndex(c *cli.Context, res trust.Result) {
	u := res.Unverified()
	tellOnce(c, "index "+res.Location, res.Standing(), func() bool {
		switch {
		case res.Expired:
			warn(c, "repository %s: offline, using the last verified index (version %d), which expired at %s",
				res.Location, res.Version, res.Expires.UTC().Format(time.RFC3339))
		case u == nil:
		case errors.Is(u, trust.ErrUsedUnsigned) && strings.HasPrefix(res.Location, "file://"):
			note(c, "%v; %s", u, hint(u, nil))
			return !c.Bool("quiet")
		default:
			warn(c, "%v; %s", u, hint(u, nil))
		}
		return true
	})
}

// The hints' keys for an index used unverified (trust.UnverifiedError).
var (
	errUnsignedRepo  = trust.ErrUsedUnsigned
	errUntrustedRepo = trust.ErrUsedUntrusted
)

// warn prints a warning to stderr, even under --quiet.
func warn(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "pkg: warning: "+format+"\n", args...)
}
