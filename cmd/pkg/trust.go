package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
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
	flag := txn.KeySource{Name: "--trusted-key"}
	for _, v := range c.StringSlice("trusted-key") {
		keys, err := trust.ParseKeys(v)
		if err != nil {
			return nil, globalUsagef("--trusted-key: %v", err)
		}
		flag.Keys = append(flag.Keys, keys...)
	}
	env := txn.KeySource{Name: "PKG_TRUSTED_KEYS"}
	var err error
	if env.Keys, err = trust.ParseKeys(os.Getenv("PKG_TRUSTED_KEYS")); err != nil {
		return nil, fmt.Errorf("PKG_TRUSTED_KEYS: %w", err)
	}
	file, err := txn.RootKeys(c.String("root"))
	return []txn.KeySource{flag, env, file}, err
}

// keyScope says which repositories k may sign.
func keyScope(k trust.PublicKey) string {
	if k.Repo == "" {
		return "for any repository"
	}
	return "for repository " + k.Repo + " only"
}

// openFetcher opens the cache and reads the index of --repo for the root (txn.ReadIndex),
// warning about an index it could not verify, and returns a fetcher of its packages. For a
// dry run, it changes nothing in the cache: it keeps no copy of the index read, and reads
// a cache that does not exist yet as an empty one.
//
// Only install and upgrade record an index in the root. That is enough: search, fetch and
// lock install nothing, and cached archives are named by sha256; sync installs by the
// lockfile's sha256s, whatever the index says.
func openFetcher(c *cli.Context, dry bool) (*txn.Fetcher, *txn.Index, error) {
	obs := &progress{c: c}
	o, err := sourceOptions(c, obs.retrying)
	if err != nil {
		return nil, nil, err
	}
	cache, err := openCacheFor(c, dry)
	if err != nil {
		return nil, nil, err
	}
	ix, err := txn.ReadIndex(c.Context, cache, c.String("root"), rootOptions(c), c.String("repo"), o)
	if err != nil {
		return nil, nil, err
	}
	if ix.NotKept != nil {
		warn(c, "%s; --offline will not have it", userText(ix.NotKept))
	}
	warnIndex(c, ix.Trust)
	if t, ok := cache.IndexTime(ix.Source); ok && c.Bool("offline") {
		// What offline installs, locks and --frozen checks are as current as.
		note(c, "offline: using the index of %s as last read %s (%s ago)", ix.Source.URL(), t.Local().Format("2006-01-02 15:04"), roughly(time.Since(t)))
	}
	return newFetcher(c, obs, ix.Source, cache), ix, nil
}

// newFetcher returns a fetcher from src into cache, reporting to obs.
func newFetcher(c *cli.Context, obs *progress, src *fetch.Source, cache *fetch.Cache) *txn.Fetcher {
	f := &txn.Fetcher{Source: src, Jobs: c.Int("jobs"), Offline: c.Bool("offline"), Observer: obs}
	f.UseCache(cache, c.Duration("lock-timeout"))
	cache.NoSync = c.Bool("no-sync")
	return f
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
// here verified, where signatures are required (txn.CheckLockSigned), warning about one
// that says nothing.
func checkLockSigned(c *cli.Context, l *repo.Lock, path string) error {
	policy, err := trustPolicy(c)
	if err != nil {
		return err
	}
	loc := c.String("repo") // the repository sync installs from
	if loc == "" {
		loc = l.Repo
	}
	unrecorded, err := txn.CheckLockSigned(l, path, policy, c.String("root"), rootOptions(c), loc)
	if unrecorded {
		warn(c, "%s does not say it was made from a verified index: lock it again with the publisher's key to record it", path)
	}
	return err
}

// warnIndex prints one line about an index that is not verified, or verified but
// expired, and a hint for the first. It prints under --quiet too: it is about what pkg
// trusts, not its progress.
func warnIndex(c *cli.Context, res trust.Result) {
	switch {
	case res.Expired:
		warn(c, "repository %s: offline, using the last verified index (version %d), which expired at %s",
			res.Location, res.Version, res.Expires.UTC().Format(time.RFC3339))
	case res.Verified():
	case len(res.SignedBy) > 0:
		warnHint(c, &unverified{errUntrustedRepo, fmt.Sprintf("repository %s is signed by key %s, but no key is trusted for it, so its index is not verified",
			res.Location, strings.Join(res.SignedBy, ", "))})
	default:
		warnHint(c, &unverified{errUnsignedRepo, fmt.Sprintf("repository %s is not signed; pkg cannot tell whether its packages are the publisher's",
			res.Location)})
	}
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

// pinHint says what to do about an index refused for want of a trusted key's signature,
// of a repository the root pinned (txn.PinnedError) or the cache's copy of which a trusted key
// verified (fetch.PinnedError).
const pinHint = "once pkg accepted a signed index of a repository, it takes only indexes a key trusted for it verifies; " +
	"if the publisher changed keys, trust the new one with 'pkg trust add KEY' ('pkg trust list' shows the pins); " +
	"if the repository really stopped signing, 'pkg repo forget' unpins it"

// trustHints say what to do about each refusal of an index.
var trustHints = []struct {
	err  error
	hint string
}{
	{fetch.ErrUnreachable, "check the network, and that the server named above is up; --offline installs what the cache holds without it"},
	{fetch.ErrNoRepository, "check --repo (PKG_REPO): it names the directory or URL that holds index.json"},
	{txn.ErrNotVerified, pinHint},
	{errUnsignedRepo, "--require-signed refuses such repositories; once the publisher signs it, trust their key with 'pkg trust add KEY'"},
	{errUntrustedRepo, "trust the publisher's key with 'pkg trust add KEY' (or --trusted-key for one command), and pkg then requires it"},
	{trust.ErrUnsigned, "ask the publisher to sign the repository (pkg repo sign); if it is signed, something on the way removed its index.json.sig"},
	{trust.ErrUntrusted, "get the publisher's public key (pkg-ed25519:...) from them and trust it with 'pkg trust add KEY' (or --trusted-key for one command); if they changed keys, trust the new one"},
	{trust.ErrBadSignature, "the index or its signature was altered after signing, or a cache on the way holds a stale one: try again, or another mirror, and tell the publisher if it persists"},
	{trust.ErrMalformed, "ask the publisher to sign the repository again with pkg repo sign"},
	{trust.ErrWrongName, "check --repo: this location serves another repository's index than before (if the publisher really renamed it, run 'pkg repo forget')"},
	{trust.ErrNotBound, "the key is trusted only for the repository its REPO= binding names: if the publisher renamed the repository, trust the key for the new name ('pkg trust add NAME=KEY', or in --trusted-key or PKG_TRUSTED_KEYS)"},
	{fetch.ErrMismatch, "the archive served is not the one the index (or lockfile) names: a mirror or proxy may hold a stale or altered copy; try again, or another mirror, and tell the publisher if it persists"},
	{trust.ErrExpired, "the publisher must sign the index again (pkg repo sign) before it expires, and a mirror serving an old copy looks the same; --offline installs from the last verified copy"},
	{trust.ErrRollback, "a mirror or proxy is serving an old index: try again later, or another mirror (if the publisher really started over, run 'pkg --repo LOCATION repo forget' for the location the newer version came from)"},
	{trust.ErrReused, "the index changed without a new version, so the publisher or their key signed two different indexes: tell the publisher (if they really started over, run 'pkg repo forget')"},
}

// pinnedHint returns pinHint for an index refused for want of a trusted key's signature
// where pkg pinned the repository, or "".
func pinnedHint(err error) string {
	pe, fe := (*txn.PinnedError)(nil), (*fetch.PinnedError)(nil)
	switch {
	case errors.As(err, &fe):
	case !errors.As(err, &pe):
		return ""
	case !errors.Is(err, trust.ErrUnsigned) && !errors.Is(err, trust.ErrUntrusted) && !errors.Is(err, trust.ErrNotBound):
		return "" // the kind's hint says more
	}
	return pinHint
}

// pathDenied reports whether err is a permission refused on one of dirs, a path in one of
// them, or a parent of one.
func pathDenied(err error, dirs []string) bool {
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(pe.Err, fs.ErrPermission) {
		return false
	}
	p := filepath.Clean(pe.Path)
	return slices.ContainsFunc(dirs, func(d string) bool {
		d, _ = filepath.Abs(d)
		return d == p || strings.HasPrefix(p, d+"/") || strings.HasPrefix(d, p+"/")
	})
}

// hint returns what to do about err, given the root and the cache (dirs), or "".
func hint(err error, dirs []string) string {
	var le *install.LinksError
	if errors.As(err, &le) {
		return fmt.Sprintf("the packages are as the command left them; once %s can be changed, 'pkg verify' names the links still wrong", le.Dir)
	}
	if h := networkHint(err); h != "" {
		return h
	}
	if errors.Is(err, install.ErrNoExchange) {
		return "put the root on a local filesystem such as XFS, btrfs, ext4 or tmpfs"
	}
	if le := (*os.LinkError)(nil); errors.As(err, &le) && (le.Op == "rename" || le.Op == "exchange") && errors.Is(le.Err, syscall.EXDEV) &&
		strings.Contains(le.Old+le.New, string(filepath.Separator)+"pkgs"+string(filepath.Separator)) {
		return "pkg moves trees within the root, so its pkgs/ and .pkg/ must be on one filesystem; on overlayfs (a container's layers), mount with redirect_dir=on"
	}
	if errors.Is(err, fetch.ErrGone) {
		return "the repository does not have the archive its index or the lockfile names: if it was republished, 'pkg lock' resolves a lockfile again; else tell its publisher"
	}
	if ne := (*repo.NeededError)(nil); errors.As(err, &ne) {
		return "remove those packages (or versions) first, or pass --force to leave their dependencies unmet"
	}
	if errors.Is(err, repo.ErrLockfile) {
		return "pkg reads a lockfile only as pkg lock wrote it: restore it from version control, or make it again with 'pkg lock -o FILE NAME...'"
	}
	if errors.Is(err, txn.ErrNotCached) {
		return "fetch them while online ('pkg fetch NAME...' fills the cache), or run without --offline (and PKG_OFFLINE unset)"
	}
	if errors.Is(err, install.ErrLocked) {
		return "run the command again once that one is done, or let it wait longer with --lock-timeout (0 waits for as long as it takes)"
	}
	if errors.Is(err, fetch.ErrNotCache) {
		return "pkg deletes files in its cache, so it makes one only in a new or empty directory and uses no other: point --cache (PKG_CACHE) at a new or empty directory"
	}
	if errors.Is(err, install.ErrReadOnly) {
		return "remount it read-write to change it, or choose another --root; list, info, files and verify work as they are"
	}
	if h := fullHint(err); h != "" {
		return h
	}
	if pathDenied(err, dirs) {
		return "pkg reads and writes --root (PKG_ROOT) and --cache (PKG_CACHE), by default under your home: a root or cache of another user's needs directories of your own"
	}
	if h := pinnedHint(err); h != "" {
		return h
	}
	for _, h := range trustHints {
		if errors.Is(err, h.err) {
			return h.hint
		}
	}
	return ""
}

// fullHint says what to do about a full or read-only filesystem, naming the path err is
// about when it has one.
func fullHint(err error) string {
	where := "the root or the cache"
	var pe *fs.PathError
	if errors.As(err, &pe) && filepath.IsAbs(pe.Path) { // not a member's path in staging
		where = pe.Path
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Sprintf("the filesystem holding %s is full (of data or of inodes): free space there, or choose another --root or --cache", where)
	case errors.Is(err, syscall.EDQUOT):
		return fmt.Sprintf("your disk quota on the filesystem holding %s is used up: free space there, or choose another --root or --cache", where)
	case errors.Is(err, syscall.EROFS):
		return fmt.Sprintf("%s is on a read-only filesystem: choose another --root or --cache", where)
	}
	return ""
}

// networkHint says what to do about a proxy that fails, a certificate no trusted authority
// signed, or a server that wants credentials; "" for other errors.
func networkHint(err error) string {
	var op *net.OpError
	var ca x509.UnknownAuthorityError
	switch {
	case errors.As(err, &op) && op.Op == "proxyconnect":
		return "the proxy HTTP_PROXY or HTTPS_PROXY names is refusing or unreachable: check those variables (and NO_PROXY)"
	case errors.As(err, &ca):
		return "if the server's certificate comes from your organisation's own authority, point SSL_CERT_FILE (or SSL_CERT_DIR) at that authority's certificate"
	case errors.Is(err, fetch.ErrDenied):
		return "if the repository needs credentials, put them in the --repo URL (https://user:token@host/path/); pkg records them nowhere"
	}
	return ""
}
