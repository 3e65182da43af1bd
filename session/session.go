// Package session is what one pkg command runs with: its root and cache, the
// repositories and trusted keys it was given, and how it runs (offline, jobs, a dry run),
// with the calls that open those for it. It reads the configuration once, closes the
// caches it opened, opens the root with what to say of it, reads and merges the indexes
// of the repositories in effect, and makes a change's Request into its plan (Plan).
//
// It is a package of its own, not part of txn, because it is about one command's run
// rather than a change to a root: txn's calls take their directories and options as
// arguments, and a session supplies the same ones to each. It names no flag or command:
// what the user should hear meanwhile goes to its observer (a txn.Observer, if any), and
// what a command must word itself (an outcome, an error to advise on) comes as a value.
package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pkg/config"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/termtext"
	"pkg/notice"
	"pkg/pin"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// Options are what a command was given.
type Options struct {
	Root, Cache string
	Repos       []config.Repo     // the repositories given, ahead of the configured ones (config.Use)
	Keys        []trust.KeySource // the trusted keys given; the root's trusted-keys file is added
	Local       []repo.Package    // local archive files a change installs, each as its entry, Origin set (txn.Catalog.WithLocal)
	// DigestMirrors are asked first for every repository's archives by sha256, before the
	// repository's configured ones and those configured for all (fetch.Options.DigestMirrors).
	DigestMirrors []string
	Invalid       Invalid // mistakes in what was given, each returned by the calls that need it
	NoRepo        error   // returned where a repository is needed and none is in effect (ErrNoRepo if nil)

	RequireSigned, Offline, NoSync, DryRun bool
	DefaultRoot                            bool          // Root is the default, not one the user named
	Jobs                                   int           // downloads at once
	LockTimeout                            time.Duration // for the root's lock and the cache's claims; 0 waits for ever
	Owner                                  string        // describes this process to those that wait for it
	// Path is the PATH a change's Outcome looks for the root's bin/ on (txn.Outcome.OffPath);
	// Quiet says the command shows no notes, so that what is said once per root is not
	// recorded as said.
	Path  string
	Quiet bool
	// Context, when not nil, is the command's: once done, it ends the waits of calls
	// that take none for another process's hold on the root's database.
	Context context.Context
}

// Invalid holds why the repositories, keys or jobs given are wrong, so that a command
// that uses none of them does not fail on them.
type Invalid struct{ Repos, Keys, Jobs error }

// ErrNoRepo is the error of a call that needs a repository where none is in effect.
var ErrNoRepo = errors.New("session: no repository")

// Session is one command's run. Close it at the end.
type Session struct {
	Options
	obs     txn.Observer
	cfg     *config.Config
	byName  bool // Repos are a lockfile's (useLock)
	caches  []*fetch.Cache
	shared  *fetch.Cache // the first of caches of the directory Cache, whose lock they share
	notices *install.Notices
}

// New returns the session of a command given o, reporting to obs (nil: to no one).
func New(o Options, obs txn.Observer) *Session {
	if obs == nil {
		obs = silent{}
	}
	s := &Session{Options: o, obs: obs}
	s.notices = &install.Notices{Dir: o.Root, Options: s.rootOptions(), DryRun: o.DryRun}
	return s
}

// Close closes the caches the session opened, which lets other processes remove entries
// again (fetch.OpenCache).
func (s *Session) Close() {
	for _, c := range s.caches {
		c.Close()
	}
	s.caches, s.shared = nil, nil
}

// config returns the configuration of the files for the root (config.Files), read once.
func (s *Session) config() (*config.Config, error) {
	if s.cfg != nil {
		return s.cfg, nil
	}
	cfg, err := config.Load(config.Files(s.Root)...)
	if err == nil {
		s.cfg = cfg
	}
	return cfg, err
}

// Repositories returns the repositories in effect (config.Use): those given, or a
// lockfile's (Request.LockRepos), then the configured ones; a name given to a configured
// repository's location that is not its own is a *config.ConflictError. One that pkg named after its location
// bears the name its index gives itself instead, once the cache keeps a copy of that index
// (fetch.IndexName), unless another in effect has that name.
func (s *Session) Repositories() ([]config.Repo, error) {
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	rs, err := cfg.Use(s.Repos, s.byName)
	if err != nil {
		return nil, err
	}
	for i, r := range rs {
		if r.Naming != config.ByLocation {
			continue
		}
		if src, err := fetch.NewSource(r.URLs[0], fetch.Options{}); err == nil {
			rs[i].Name = free(rs, r.Name, fetch.IndexName(s.Cache, src))
		}
	}
	return rs, s.Invalid.Repos
}

// free returns name if it is a repository name none of rs has, else was.
func free(rs []config.Repo, was, name string) string {
	if !repo.ValidRepoName(name) || slices.ContainsFunc(rs, func(r config.Repo) bool { return r.Name == name }) {
		return was
	}
	return name
}

// indexName returns the name of r, in effect among rs, once its index ix is read: the
// name the index gives itself, where pkg named r after its location; a *RepoNameError
// where the user named r otherwise.
func indexName(rs []config.Repo, r config.Repo, ix *txn.Catalog) (string, error) {
	switch n := ix.Meta.Name; {
	case n == "" || n == r.Name || r.Naming == config.ByLock:
		return r.Name, nil
	case r.Naming == config.ByUser:
		return "", &RepoNameError{Given: r.Name, Name: n, URL: r.URLs[0], File: r.File}
	default:
		return free(rs, r.Name, n), nil
	}
}

// RepoNameError is a repository called by a name that is not its own: by the user, where
// its index names it otherwise (File says where the user named it), or by the name pkg made
// of its location (File ""), which the index's name took the place of.
type RepoNameError struct {
	Given, Name string // the name used, and the repository's own
	URL, File   string
}

func (e *RepoNameError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("repository %s (%s, from %s): its index names it %s", e.Given, termtext.WithoutCredentials(e.URL), e.File, e.Name)
	}
	return fmt.Sprintf("repository %s is named %s, as its index names it, not %s", termtext.WithoutCredentials(e.URL), e.Name, e.Given)
}

// checkRepoName returns a *RepoNameError where name is that pkg made of the location of a
// repository in effect that is named otherwise (Repositories), and nil for any other name.
func (s *Session) checkRepoName(name string) error {
	rs, err := s.Repositories()
	if err != nil || slices.ContainsFunc(rs, func(r config.Repo) bool { return r.Name == name }) {
		return nil
	}
	for _, r := range rs {
		if r.Naming == config.ByLocation && config.LocationName(r.URLs[0]) == name {
			return &RepoNameError{Given: name, Name: r.Name, URL: r.URLs[0]}
		}
	}
	return nil
}

// useLock makes the repositories of the lockfile l at path those given, a configured
// repository of the same name taking the place of each.
func (s *Session) useLock(l *repo.Lock, path string) {
	s.Repos, s.byName, s.Invalid.Repos = config.LockRepos(l, path), true, nil
}

// useLockBeside makes the repositories in effect, for the lockfile l at path of several
// repositories read with repositories given (--repo NAME=URL), in the lockfile's order the
// given one of each recorded name, else the configured one, else its record, then the given
// ones of other names: those a sync of l fetches from (config.LockUses), so that a frozen
// sync and a run resolve from them too. A configuration that cannot be read changes
// nothing: Repositories returns its error.
func (s *Session) useLockBeside(l *repo.Lock, path string) {
	cfg, err := s.config()
	if len(l.Repos) == 0 || err != nil {
		return
	}
	given := slices.Clone(s.Repos)
	s.Repos = nil
	for _, r := range config.LockRepos(l, path) {
		named := func(x config.Repo) bool { return x.Name == r.Name }
		if i := slices.IndexFunc(given, named); i >= 0 {
			r = given[i]
			given = slices.Delete(given, i, i+1)
		} else if i := slices.IndexFunc(cfg.Repos, named); i >= 0 {
			r = cfg.Repos[i]
		}
		s.Repos = append(s.Repos, r)
	}
	s.Repos = append(s.Repos, given...)
}

// hasRepos reports whether a repository is in effect; a configuration that cannot be
// read counts as one, so that its error is what the command reports.
func (s *Session) hasRepos() bool {
	rs, err := s.Repositories()
	return err != nil || len(rs) > 0
}

// rootOptions are the options the session opens the root with.
func (s *Session) rootOptions() install.Options {
	return install.Options{NoSync: s.NoSync, LockTimeout: s.LockTimeout, Owner: s.Owner, Waiting: s.obs.RootWaiting, Context: s.Context}
}

// keySources returns the trusted keys of each source: those given, then the root's.
func (s *Session) keySources() ([]trust.KeySource, error) {
	if s.Invalid.Keys != nil {
		return nil, s.Invalid.Keys
	}
	file, err := pin.RootKeys(s.Root)
	return append(append([]trust.KeySource(nil), s.Keys...), file), err
}

// trustPolicy returns the keys the session trusts and whether it requires signatures
// (trust.NewPolicy).
func (s *Session) trustPolicy() (trust.Policy, error) {
	sources, err := s.keySources()
	return trust.NewPolicy(sources, s.RequireSigned), err
}

// sourceOptions are the options of a source under the session's trust policy.
func (s *Session) sourceOptions() (fetch.Options, error) {
	if s.Invalid.Jobs != nil {
		return fetch.Options{}, s.Invalid.Jobs
	}
	policy, err := s.trustPolicy()
	if err != nil {
		return fetch.Options{}, err
	}
	failover := func(to string, why error) { s.obs.Notice(notice.Failover{To: to, Err: why}) }
	return fetch.Options{Offline: s.Offline, Trust: policy, Retrying: s.obs.Retrying, Failover: failover}, nil
}

// repoSource returns the source of r, its first URL with the rest as mirrors, under the
// session's trust policy with r's own keys added (repoOptions).
func (s *Session) repoSource(r config.Repo) (*fetch.Source, error) {
	o, err := s.repoOptions(r)
	if err != nil {
		return nil, err
	}
	return fetch.NewSource(r.URLs[0], o)
}

// repoOptions returns the options of the source of r (repoSource).
func (s *Session) repoOptions(r config.Repo) (fetch.Options, error) {
	o, err := s.sourceOptions()
	if err == nil {
		o.Trust, err = r.Trust(o.Trust)
	}
	if err != nil {
		return o, err
	}
	o.Mirrors = r.URLs[1:]
	a, err := r.Credential()
	if err != nil {
		return o, err
	}
	o.Credential = fetch.Credential{Username: a.Username, Password: a.Password, Token: a.Token}
	o.CredentialFrom, o.CredentialVars, o.Repo = a.From, r.CredentialVars(), r.Name
	o.Netrc, o.CleartextCredentials = config.NetrcFile(), r.CleartextCredentials
	o.DigestMirrors, err = s.digestMirrors(r)
	return o, err
}

// digestMirrors returns the by-digest mirrors of r: those given, then r's, then those
// configured for every repository, each once.
func (s *Session) digestMirrors(r config.Repo) ([]string, error) {
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range slices.Concat(s.DigestMirrors, r.DigestMirrors, cfg.DigestMirrors) {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out, nil
}

// UnknownRepoError is the error of source for a name no repository in effect has.
type UnknownRepoError struct {
	Name  string
	InUse []string // the names of those in effect
}

func (e *UnknownRepoError) Error() string {
	if len(e.InUse) == 0 {
		return fmt.Sprintf("no repository %s in use: none is configured or given", e.Name)
	}
	return fmt.Sprintf("no repository %s in use (%s)", e.Name, strings.Join(e.InUse, ", "))
}

// source returns the source of the repository in effect named name, or of the first
// for "".
func (s *Session) source(name string) (*fetch.Source, error) {
	rs, err := s.Repositories()
	if err == nil && len(rs) == 0 && name == "" {
		err = s.noRepo()
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range rs {
		if name == "" || r.Name == name {
			return s.repoSource(r)
		}
		names = append(names, r.Name)
	}
	if err := s.checkRepoName(name); err != nil {
		return nil, err
	}
	return nil, &UnknownRepoError{Name: name, InUse: names}
}

func (s *Session) noRepo() error {
	if s.NoRepo != nil {
		return s.NoRepo
	}
	return ErrNoRepo
}

// SourceURL returns the URL of the repository at location, as pkg names it ("file:///srv/r/").
func SourceURL(location string) (string, error) {
	src, err := fetch.NewSource(location, fetch.Options{})
	if err != nil {
		return "", err
	}
	return src.URL(), nil
}

// GivenRepos returns the repositories of values, each [NAME=]LOCATION, given as from (a
// flag, a variable); an empty one drops those before it.
func GivenRepos(from string, values ...string) ([]config.Repo, error) {
	var out []config.Repo
	for _, v := range values {
		name, loc := config.SplitRepo(v)
		if loc == "" && name != "" {
			return nil, fmt.Errorf("%s %q: no location", from, v)
		} else if loc == "" {
			out = nil
			continue
		}
		out = append(out, config.Repo{Name: name, URLs: []string{loc}, File: from})
	}
	return out, nil
}
