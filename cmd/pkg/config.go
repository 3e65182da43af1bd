package main

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/config"
	"pkg/fetch"
	"pkg/repo"
	"pkg/report"
	"pkg/trust"
)

// loadConfig returns the configuration of the files for --root (config.Files), read once
// per command.
func loadConfig(c *cli.Context) (*config.Config, error) {
	if cfg, ok := c.App.Metadata["config"].(*config.Config); ok {
		return cfg, nil
	}
	cfg, err := config.Load(config.Files(c.String("root"))...)
	if err != nil {
		return nil, err
	}
	c.App.Metadata["config"] = cfg
	return cfg, nil
}

// repositories returns the repositories a command uses, in the order names resolve from
// them: those of --repo (or else PKG_REPO), or those a lock or sync took from its
// lockfile (useLockRepos), then the configured ones not among them. A location given that
// is a configured repository's first URL is that repository, with its name, mirrors and
// keys.
func repositories(c *cli.Context) ([]report.Repository, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	given, _ := c.App.Metadata["lock-repos"].([]report.Repository)
	if given == nil {
		if given, err = flagRepos(c); err != nil {
			return nil, err
		}
	}
	var out []report.Repository
	taken := func(name string) bool {
		return slices.ContainsFunc(out, func(r report.Repository) bool { return r.Name == name })
	}
	for _, g := range given {
		if i := slices.IndexFunc(cfg.Repos, func(r config.Repo) bool {
			return r.URLs[0] == g.URLs[0] || r.Name == g.Name && g.From != "--repo" && g.From != "PKG_REPO"
		}); i >= 0 {
			g = configured(cfg.Repos[i])
		}
		if g.Name == "" {
			g.Name = nameOf(g.URLs[0])
		}
		for n, base := 2, g.Name; taken(g.Name); n++ {
			g.Name = fmt.Sprintf("%s-%d", base, n)
		}
		out = append(out, g)
	}
	for _, r := range cfg.Repos {
		if !taken(r.Name) && !slices.ContainsFunc(out, func(o report.Repository) bool { return o.URLs[0] == r.URLs[0] }) {
			out = append(out, configured(r))
		}
	}
	return out, nil
}

func configured(r config.Repo) report.Repository {
	return report.Repository{Name: r.Name, URLs: r.URLs, Keys: r.Keys, Priority: r.Priority, From: r.File}
}

// flagRepos returns the repositories of --repo, each [NAME=]LOCATION, or else of PKG_REPO;
// an empty --repo drops the ones before it.
func flagRepos(c *cli.Context) ([]report.Repository, error) {
	values, from := c.StringSlice("repo"), "--repo"
	if !c.IsSet("repo") && os.Getenv("PKG_REPO") != "" { // --repo= overrides it with none
		values, from = []string{os.Getenv("PKG_REPO")}, "PKG_REPO"
	}
	var out []report.Repository
	for _, v := range values {
		name, loc, ok := strings.Cut(v, "=")
		if !ok || !repo.ValidName(name) {
			name, loc = "", v
		}
		if loc == "" {
			if name != "" {
				return nil, globalUsagef("%s %q: no location", from, v)
			}
			out = nil // --repo= drops those before it, and PKG_REPO
			continue
		}
		out = append(out, report.Repository{Name: name, URLs: []string{loc}, From: from})
	}
	return out, nil
}

// useLockRepos makes the repositories of the lockfile l at path those a lock or sync
// uses, unless --repo or PKG_REPO says otherwise: each by its recorded name, URL and a
// configured repository's of that name, if any.
func useLockRepos(c *cli.Context, l *repo.Lock, path string) {
	if c.IsSet("repo") || os.Getenv("PKG_REPO") != "" {
		return
	}
	var rs []report.Repository
	for _, r := range l.Repos {
		rs = append(rs, report.Repository{Name: r.Name, URLs: []string{r.URL}, From: "lockfile " + path})
	}
	if len(rs) == 0 {
		rs = []report.Repository{{URLs: []string{l.Repo}, From: "lockfile " + path}}
	}
	c.App.Metadata["lock-repos"] = rs
}

// nameOf makes a repository name of a location: its last path element, else its host,
// else "repo".
func nameOf(loc string) string {
	p := loc
	if u, err := url.Parse(loc); err == nil && u.Scheme != "" {
		p = strings.TrimSuffix(u.Path, "index.json")
		if strings.Trim(p, "/") == "" {
			p = u.Hostname()
		}
	}
	name := strings.ToLower(path.Base(strings.TrimSuffix(strings.TrimSuffix(p, "index.json"), "/")))
	if !repo.ValidName(name) {
		return "repo"
	}
	return name
}

// repoSource returns the source of r, its first URL with the rest as mirrors, under the
// flags' trust policy with r's own keys added.
func repoSource(c *cli.Context, r report.Repository, retrying func(err error, wait time.Duration, attempt, max int)) (*fetch.Source, fetch.Options, error) {
	o, err := sourceOptions(c, retrying)
	if err != nil {
		return nil, o, err
	}
	if o.Trust, err = withKeys(o.Trust, r); err != nil {
		return nil, o, err
	}
	o.Mirrors = r.URLs[1:]
	src, err := fetch.NewSource(r.URLs[0], o)
	return src, o, err
}

// withKeys returns p trusting also the keys of r, which makes r's index need a signature.
func withKeys(p trust.Policy, r report.Repository) (trust.Policy, error) {
	p.Keys = slices.Clone(p.Keys)
	for _, s := range r.Keys {
		k, err := trust.ParsePublicKey(s)
		if err != nil {
			return p, fmt.Errorf("repository %s (%s): key: %w", r.Name, r.From, err)
		}
		p.Keys = append(p.Keys, k)
	}
	return p, nil
}

// hasRepos reports whether a repository is in effect (repositories); a configuration
// that cannot be read counts as one, so that its error is what the command reports.
func hasRepos(c *cli.Context) bool {
	rs, err := repositories(c)
	return err != nil || len(rs) > 0
}
