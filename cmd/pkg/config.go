package main

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/config"
	"pkg/fetch"
	"pkg/repo"
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

// repositories returns the repositories a command uses (config.Use): those of --repo (or
// else PKG_REPO), or those a lock or sync took from its lockfile (useLockRepos), then the
// configured ones.
func repositories(c *cli.Context) ([]config.Repo, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	if given, ok := c.App.Metadata["lock-repos"].([]config.Repo); ok {
		return cfg.Use(given, true), nil
	}
	given, err := flagRepos(c)
	return cfg.Use(given, false), err
}

// flagRepos returns the repositories of --repo, each [NAME=]LOCATION, or else of PKG_REPO;
// an empty --repo drops the ones before it.
func flagRepos(c *cli.Context) ([]config.Repo, error) {
	values, from := c.StringSlice("repo"), "--repo"
	if !c.IsSet("repo") && os.Getenv("PKG_REPO") != "" { // --repo= overrides it with none
		values, from = []string{os.Getenv("PKG_REPO")}, "PKG_REPO"
	}
	var out []config.Repo
	for _, v := range values {
		name, loc := config.SplitRepo(v)
		if loc == "" && name != "" {
			return nil, globalUsagef("%s %q: no location", from, v)
		} else if loc == "" {
			out = nil // --repo= drops those before it, and PKG_REPO
			continue
		}
		out = append(out, config.Repo{Name: name, URLs: []string{loc}, File: from})
	}
	return out, nil
}

// useLockRepos makes the repositories of the lockfile l at path those a lock or sync
// uses, unless --repo or PKG_REPO says otherwise.
func useLockRepos(c *cli.Context, l *repo.Lock, path string) {
	if !c.IsSet("repo") && os.Getenv("PKG_REPO") == "" {
		c.App.Metadata["lock-repos"] = config.LockRepos(l, path)
	}
}

// repoSource returns the source of r, its first URL with the rest as mirrors, under the
// flags' trust policy with r's own keys added.
func repoSource(c *cli.Context, r config.Repo, retrying func(err error, wait time.Duration, attempt, max int)) (*fetch.Source, fetch.Options, error) {
	o, err := sourceOptions(c, retrying)
	if err == nil {
		o.Trust, err = r.Trust(o.Trust)
	}
	if err != nil {
		return nil, o, err
	}
	o.Mirrors = r.URLs[1:]
	src, err := fetch.NewSource(r.URLs[0], o)
	return src, o, err
}

// hasRepos reports whether a repository is in effect (repositories); a configuration
// that cannot be read counts as one, so that its error is what the command reports.
func hasRepos(c *cli.Context) bool {
	rs, err := repositories(c)
	return err != nil || len(rs) > 0
}
