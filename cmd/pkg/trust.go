package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/trust"
)

// trustPolicy returns the keys pkg trusts, from --trusted-key, PKG_TRUSTED_KEYS and the
// root's trusted-keys file, and whether it requires signatures. Every key applies to every
// repository, unless bound to one repository name ("NAME=pkg-ed25519:...").
func trustPolicy(c *cli.Context) (trust.Policy, error) {
	p := trust.Policy{RequireSigned: c.Bool("require-signed")}
	sources, err := keySources(c)
	for _, s := range sources {
		p.Keys = append(p.Keys, s.keys...)
	}
	return p, err
}

// keySource is where trusted keys come from, and those keys.
type keySource struct {
	name string // "--trusted-key", "PKG_TRUSTED_KEYS", or the root's trusted-keys file
	keys []trust.PublicKey
}

// keySources returns the trusted keys of each source.
func keySources(c *cli.Context) ([]keySource, error) {
	flag := keySource{name: "--trusted-key"}
	for _, v := range c.StringSlice("trusted-key") {
		keys, err := trust.ParseKeys(v)
		if err != nil {
			return nil, globalUsagef("--trusted-key: %v", err)
		}
		flag.keys = append(flag.keys, keys...)
	}
	env := keySource{name: "PKG_TRUSTED_KEYS"}
	var err error
	if env.keys, err = trust.ParseKeys(os.Getenv("PKG_TRUSTED_KEYS")); err != nil {
		return nil, fmt.Errorf("PKG_TRUSTED_KEYS: %w", err)
	}
	file := keySource{name: trustedKeysFile(c.String("root"))}
	if file.keys, err = trust.ReadTrusted(file.name); err != nil {
		return nil, fmt.Errorf("read the trusted keys of root %s: %w", c.String("root"), err)
	}
	return []keySource{flag, env, file}, nil
}

// trustedKeysFile is where the root keeps the keys it trusts (package trust's format).
func trustedKeysFile(root string) string { return filepath.Join(root, ".pkg", "trusted-keys") }

// pinPolicy returns p trusting also, for pin's repository only, the keys the root pinned it
// to, and requiring a signature even when no key is left for it.
func pinPolicy(p trust.Policy, pin db.Repo) (trust.Policy, error) {
	for _, s := range pin.Keys {
		k, err := trust.ParsePublicKey(s)
		if err != nil {
			return p, fmt.Errorf("the root's record of repository %s: %w", pin.Location, err)
		}
		k.Repo = pin.Name
		p.Keys = append(p.Keys, k)
	}
	p.RequireSigned = true
	return p, nil
}

// openFetcher opens the repository and the cache and reads the index, believed only as
// the trust policy allows and, where the root has a record of the repository (a pin),
// only if a key trusted for it verifies it (the keys the record pinned it to are) and it
// is not older than that record. It warns about an index it could not verify. It reads
// the root's record without its lock, so that a slow repository does not hold the root:
// install and upgrade take the lock after, and check the index against the record again
// then (fetcher.accept). Without a root, the cache's last verified copy of the index
// bounds the next one likewise (fetch.PinnedError).
//
// Only install and upgrade record an index in the root. That is enough: search, fetch and
// lock install nothing, and cached archives are named by sha256; sync installs by the
// lockfile's sha256s, whatever the index says.
func openFetcher(c *cli.Context) (*fetcher, *repo.Index, error) {
	f := &fetcher{c: c}
	src, err := openSource(c, f.retrying)
	if err != nil {
		return nil, nil, err
	}
	cache, err := openCache(c)
	if err != nil {
		return nil, nil, err
	}
	pin, err := rootPin(c, src.URL())
	if err != nil {
		return nil, nil, err
	}
	var known []trust.Record
	if pin != nil {
		known = []trust.Record{record(*pin)}
		if src, err = openPinnedSource(c, pin, f.retrying); err != nil {
			return nil, nil, err
		}
	}
	ix, res, err := cache.VerifiedIndex(c.Context, src, known...)
	if nk := (*fetch.NotKeptError)(nil); errors.As(err, &nk) {
		warn(c, "%s; --offline will not have it", err)
		err = nil
	}
	if te := (*trust.Error)(nil); pin != nil && errors.As(err, &te) {
		err = &pinnedError{root: c.String("root"), pin: *pin, err: err}
	}
	if err != nil {
		return nil, nil, err
	}
	warnIndex(c, res)
	if t, ok := cache.IndexTime(src); ok && c.Bool("offline") {
		// What offline installs, locks and --frozen checks are as current as.
		note(c, "offline: using the index of %s as last read %s (%s ago)", src.URL(), t.Local().Format("2006-01-02 15:04"), roughly(time.Since(t)))
	}
	f.src, f.index, f.pin = src, res, pin
	f.useCache(cache)
	return f, ix, nil
}

// rootPin returns the root's record of the repository at url, or nil where there is none
// (or no root).
func rootPin(c *cli.Context, url string) (*db.Repo, error) {
	var pin *db.Repo
	err := peekRoot(c, func(d *db.DB) error {
		r, ok, err := d.Repo(url)
		if ok {
			pin = &r
		}
		return err
	})
	return pin, err
}

// pinnedError is an index refused for a repository whose signed index the root accepted:
// with or without keys given, the index must verify with a key trusted for it.
type pinnedError struct {
	root string
	pin  db.Repo
	err  error // a *trust.Error
}

func (e *pinnedError) Error() string {
	return fmt.Sprintf("%v (root %s pinned repository %s%s when it accepted its index version %d)",
		e.err, e.root, e.pin.Name, pinnedKeys(e.pin), e.pin.Version)
}

func (e *pinnedError) Unwrap() error { return e.err }

// pinnedKeys says which keys pin pinned its repository to, " to key ID", or "" for none.
func pinnedKeys(pin db.Repo) string {
	var ids []string
	for _, s := range pin.Keys {
		if k, err := trust.ParsePublicKey(s); err == nil {
			ids = append(ids, k.ID())
		}
	}
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return " to key " + ids[0]
	}
	return " to keys " + strings.Join(ids, ", ")
}

// roughly says d in its largest unit: "5 minutes", "3 hours", "2 days".
func roughly(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return "a minute"
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d days", d/(24*time.Hour))
}

// stale reports whether the root's record of the repository changed since f read the
// index, as when another command accepted a newer index while this one waited for the
// root: the index must then be read again, or accept would refuse it as a rollback.
func (f *fetcher) stale(root *install.Root) (bool, error) {
	now, ok, err := root.DB().Repo(f.src.URL())
	switch {
	case err != nil:
		return false, err
	case !ok || f.pin == nil:
		return ok != (f.pin != nil), nil
	}
	return record(now) != record(*f.pin) || !slices.Equal(now.Keys, f.pin.Keys), nil
}

// sameRepo reports whether r records the repository name signed by one of keyIDs: a record
// from before records carried key ids stands for its own location only.
func sameRepo(r db.Repo, name string, keyIDs ...string) bool {
	return r.KeyID != "" && r.Name == name && slices.Contains(keyIDs, r.KeyID)
}

// openRootFor takes the root's lock for a command that read the index with f and returns
// the root, and f, or a fetcher with the index read again if f's is stale.
func openRootFor(c *cli.Context, f *fetcher, ix *repo.Index) (*install.Root, *fetcher, *repo.Index, error) {
	root, err := openRoot(c)
	if err != nil {
		return nil, nil, nil, err
	}
	if stale, err := f.stale(root); err != nil || stale {
		if err == nil {
			f, ix, err = openFetcher(c)
		}
		if err != nil {
			root.Close()
			return nil, nil, nil, err
		}
	}
	return root, f, ix, nil
}

// accept records in root that it accepted the fetcher's index, when a trusted key
// verified it, and the keys that did (the root pins the repository to them), before
// anything from that index is installed. It refuses, under the root's lock, an index the
// root's record forbids: one older than the record, and an unverified one from a
// repository whose signed index the root accepted before.
func (f *fetcher) accept(root *install.Root) error {
	res := f.index // sync reads no index: this is empty, and no root records one
	prev, ok, err := root.DB().Repo(res.Location)
	if err != nil {
		return err
	}
	if !res.Verified() {
		if ok {
			return fmt.Errorf("repository %s: %w: this root installed from its signed index (version %d) before",
				res.Location, errNotVerified, prev.Version)
		}
		return nil
	}
	keys := make([]string, len(res.Keys))
	for i, k := range res.Keys {
		k.Repo = "" // the record binds it to its repository
		keys[i] = k.String()
	}
	if ok {
		if record(prev) == res.Record && prev.KeyID == res.KeyID && slices.Equal(prev.Keys, keys) {
			return nil
		}
		if err := res.Record.Follows(record(prev)); err != nil {
			return err
		}
	}
	// The same repository, signed by a key trusted for it, from another location (a mirror,
	// or another spelling of the host) may not roll back what was accepted there either.
	all, err := root.DB().Repos()
	if err != nil {
		return err
	}
	for _, r := range all {
		if r.Location != res.Location && sameRepo(r, res.Name, res.Trusted...) {
			if err := res.Record.NotOlder(record(r)); err != nil {
				return err
			}
		}
	}
	return root.DB().PutRepo(db.Repo{Location: res.Location, Name: res.Name, Version: res.Version,
		SHA256: res.SHA256, KeyID: res.KeyID, Keys: keys, Accepted: time.Now().UTC()})
}

func record(r db.Repo) trust.Record {
	return trust.Record{Location: r.Location, Name: r.Name, Version: r.Version, SHA256: r.SHA256}
}

// warnIndex prints one line about an index that is not verified, or verified but
// expired, and a hint for the first, once per root until that changes (tellOnce). It
// warns under --quiet too, as it is about what pkg trusts; an unsigned local directory
// is only a note: no one stands between it and pkg.
func warnIndex(c *cli.Context, res trust.Result) {
	key, state, say := "index "+res.Location, "", func() bool { return true }
	switch {
	case res.Expired:
		state = fmt.Sprintf("expired version %d", res.Version)
		say = func() bool {
			warn(c, "repository %s: offline, using the last verified index (version %d), which expired at %s",
				res.Location, res.Version, res.Expires.UTC().Format(time.RFC3339))
			return true
		}
	case res.Verified():
	case len(res.SignedBy) > 0:
		state = "signed by " + strings.Join(res.SignedBy, ", ")
		say = func() bool {
			warnHint(c, &unverified{errUntrustedRepo, fmt.Sprintf("repository %s is signed by key %s, but no key is trusted for it, so its index is not verified",
				res.Location, strings.Join(res.SignedBy, ", "))})
			return true
		}
	case strings.HasPrefix(res.Location, "file://"):
		state = "unsigned"
		say = func() bool {
			note(c, "repository %s is not signed; pkg cannot tell whether its packages are the publisher's; %s", res.Location, hint(errUnsignedRepo, nil))
			return !c.Bool("quiet")
		}
	default:
		state = "unsigned"
		say = func() bool {
			warnHint(c, &unverified{errUnsignedRepo, fmt.Sprintf("repository %s is not signed; pkg cannot tell whether its packages are the publisher's",
				res.Location)})
			return true
		}
	}
	tellOnce(c, key, state, say)
}

// unverified is a warning about an index pkg uses unverified; its kind keys its hint.
type unverified struct {
	kind error // errUnsignedRepo or errUntrustedRepo
	msg  string
}

func (w *unverified) Error() string { return w.msg }

func (w *unverified) Unwrap() error { return w.kind }

var (
	errUnsignedRepo  = errors.New("repository not signed")
	errUntrustedRepo = errors.New("repository key not trusted")
)

// warnHint prints w as a warning, its hint on the same line: one line per warning.
func warnHint(c *cli.Context, w *unverified) {
	warn(c, "%s; %s", w.msg, hint(w, nil))
}

// warn prints a warning to stderr, even under --quiet.
func warn(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "pkg: warning: "+format+"\n", args...)
}

// errNotVerified refuses an unverified index of a repository a root accepted signed before.
var errNotVerified = errors.New("index not verified")
