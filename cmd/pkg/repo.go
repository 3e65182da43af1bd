package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/config"
	"pkg/internal/units"
	"pkg/publish"
	"pkg/repo"
	"pkg/report"
	"pkg/session"
)

func repoCommand() *cli.Command {
	return &cli.Command{
		Name:  "repo",
		Usage: "maintain a repository directory",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "copy archives into a repository, or record the http(s) URLs they are published at, and add them to the index, all or none; or, --from, every package of a package-lock.json",
			ArgsUsage: "REPO_DIR ARCHIVE... | REPO_DIR --from package-lock.json",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "package name (required but for a .deb, its Package, and an npm tarball, its package.json's)"},
				&cli.StringFlag{Name: "version", Usage: "package version (required but for a .deb, its Version, and an npm tarball, its package.json's)"},
				&cli.StringSliceFlag{Name: "depends", Usage: "a dependency: name, name=V, name>=V, name<V, alternatives a|b (repeatable; for a .deb: its Depends and Pre-Depends)"},
				&cli.StringSliceFlag{Name: "provides", Usage: "a virtual package it provides: name or name=V (repeatable; for a .deb: its Provides)"},
				&cli.StringSliceFlag{Name: "conflicts", Usage: "a package it cannot be installed with: name, name<V... (repeatable; for a .deb: its Conflicts and Breaks)"},
				&cli.StringSliceFlag{Name: "replaces", Usage: "a package whose files and commands it may take over: name, name<V... (repeatable; for a .deb: its Replaces)"},
				&cli.StringSliceFlag{Name: "bin", Usage: "a command: its file's path inside the package, or NAME=PATH to name it otherwise; installed executable (repeatable; for a .deb: the executables in usr/bin, bin, usr/sbin and sbin)"},
				&cli.StringSliceFlag{Name: "lib", Usage: "a directory of shared libraries inside the package, on LD_LIBRARY_PATH for its commands and those of the packages depending on it (repeatable; for a .deb: the directories holding lib*.so*)"},
				&cli.StringSliceFlag{Name: "env", Usage: "NAME=VALUE its commands run with, for files a program looks for at a path compiled in, {root} standing for the root's path: --env MAGIC={root}/usr/lib/file/magic.mgc (repeatable)"},
				&cli.StringFlag{Name: "summary", Usage: "one line describing the package (for a .deb: its Description's first line)"},
				&cli.StringFlag{Name: "platform", Usage: "the platform the package runs on, GOOS-GOARCH such as linux-amd64 (default: a .deb's Architecture's, an npm tarball's os and cpu's, else any)"},
				&cli.BoolFlag{Name: "replace", Usage: "replace the entry of the same name and version, if it differs"},
				&cli.StringFlag{Name: "from", Usage: "add every package this package-lock.json (npm 7 or later) names, from npm's cache or its registry, each checked against its sha512 integrity, and write a lockfile of the project", TakesFile: true},
				&cli.StringFlag{Name: "lock", Usage: "with --from: the lockfile to write (default: pkg.lock beside the package-lock.json)", TakesFile: true},
				&cli.StringFlag{Name: "npm-cache", Usage: "with --from: npm's cache directory (default: $npm_config_cache, else ~/.npm)", TakesFile: true},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Before: repoAddArgs,
			Action: repoAddAction,
		}, {
			Name:      "remove",
			Usage:     "remove a package, or one version of it, from a repository's index and delete its archive",
			ArgsUsage: "REPO_DIR NAME[=VERSION]",
			Flags: append([]cli.Flag{
				&cli.BoolFlag{Name: "force", Usage: "remove it even if other packages in the index depend on it"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Before: want(2, "REPO_DIR NAME[=VERSION]"),
			Action: repoRemoveAction,
		}, {
			Name:      "push",
			Usage:     "upload a repository directory to an OCI registry: its index, signature and archives as blobs (those already there are not sent), then the manifest naming them",
			ArgsUsage: "REPO_DIR oci://HOST[:PORT]/NAMESPACE/REPO[:TAG]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "chunk-size", Usage: "send a blob larger than `SIZE` in chunks of that size, one request each (default 64MiB)"},
				&cli.BoolFlag{Name: "force", Usage: "push even an index older than the one the tag names, or of its version with other bytes, or of another repository, or unsigned over a signed one (a publisher who started over: clients must then 'pkg repo forget' it), or over a tag naming what is not a pkg repository"},
			},
			Before: want(2, "REPO_DIR oci://HOST[:PORT]/NAMESPACE/REPO[:TAG]"),
			Action: repoPushAction,
		}, noArgs(repoKeygenCommand()), repoSignCommand(), repoForgetCommand(), noArgs(repoListCommand())},
	}
}

func repoRemoveAction(c *cli.Context) error {
	dir := c.Args().Get(0)
	name, version, pinned := strings.Cut(c.Args().Get(1), "=")
	if pinned && version == "" {
		return usagef("repo remove: no version after %q", c.Args().Get(1))
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	res, err := repo.Remove(c.Context, dir, repo.Removal{Name: name, Version: version, Force: c.Bool("force")}, signer)
	if err != nil {
		return err
	}
	lines, warnings := report.RemovedText(dir, res)
	tellAll(c, say, lines)
	tellAll(c, warn, warnings)
	if signer != nil {
		saySigned(c, dir, res.Meta, keys)
	}
	return nil
}

// repoAddAction adds an archive to a repository directory (publish.Add), and notes what
// the new entry may lack; several archives, each as it describes itself (repoAddAll);
// with --from, a package-lock.json's packages (repoImport).
func repoAddAction(c *cli.Context) error {
	if c.IsSet("from") {
		return repoImport(c)
	}
	if c.NArg() > 2 {
		return repoAddAll(c)
	}
	dir, archive := c.Args().Get(0), c.Args().Get(1)
	if platform := c.String("platform"); platform != "" {
		if err := repo.CheckPlatform(platform); err != nil {
			return usagef("repo add: --platform: %v", err)
		}
	}
	a, err := publish.Open(c.Context, archive)
	if err != nil {
		return err
	}
	defer a.Close()
	p := repo.Package{Name: c.String("name"), Version: c.String("version"), Summary: c.String("summary"), Platform: c.String("platform")}
	for _, f := range []struct {
		flag string
		list *[]repo.Requirement
	}{{"depends", &p.Depends}, {"provides", &p.Provides}, {"conflicts", &p.Conflicts}, {"replaces", &p.Replaces}} {
		if c.IsSet(f.flag) { // --depends '' gives none: a .deb's are then not taken
			given := slices.DeleteFunc(c.StringSlice(f.flag), func(s string) bool { return s == "" })
			if *f.list, err = repo.ParseRequirements(given); err != nil {
				return fmt.Errorf("repo add: --%s: %w", f.flag, err)
			}
		}
	}
	if c.IsSet("bin") {
		p.Bin = commandFlags(c)
	}
	if c.IsSet("lib") {
		p.Lib = c.StringSlice("lib")
	}
	for _, e := range c.StringSlice("env") {
		if err := repo.CheckEnv(e); err != nil {
			return usagef("repo add: --env: %v", err)
		}
		p.Env = append(p.Env, e)
	}
	if p, err = a.Entry(p, c.IsSet("summary")); err != nil {
		return fmt.Errorf("repo add: %w", err)
	}
	if p.Name == "" || p.Version == "" {
		return usagef("repo add: --name and --version are required (a .deb's control file and an npm tarball's package.json give them)")
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	res, err := publish.Add(c.Context, dir, a, p, c.Bool("replace"), signer)
	if err != nil {
		return err
	}
	sayAdded(c, dir, res, true)
	tellAll(c, warn, report.LeftWarnings(dir, res.Dropped))
	sayIndex(c, dir, res.Written, res.Meta, signer, keys)
	return nil
}

// repoAddAll adds the archives REPO_DIR is followed by to it, all in one index write or
// none (publish.AddAll), and says what each added.
func repoAddAll(c *cli.Context) error {
	dir := c.Args().Get(0)
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	all, err := publish.AddAll(c.Context, dir, c.Args().Slice()[1:], c.Bool("replace"), signer)
	if err != nil {
		return err
	}
	for i, res := range all {
		sayAdded(c, dir, res, i == 0)
	}
	tellAll(c, warn, report.LeftWarnings(dir, all[0].Dropped))
	sayIndex(c, dir, all[0].Written, all[0].Meta, signer, keys)
	return nil
}

// sayAdded says what an add did, and what the new entry may lack; first says whether the
// directory was a new repository.
func sayAdded(c *cli.Context, dir string, res *publish.Added, first bool) {
	created, added, notes := report.AddedText(dir, res)
	if created != "" && first {
		note(c, "%s", created)
	}
	say(c, "%s", added)
	tellAll(c, warn, report.AbsentWarnings(res.Package, res.Absent))
	tellAll(c, note, notes)
	if p := res.Package; len(res.LibDirs) > 0 {
		note(c, "%s %s has shared libraries in %s: --lib %s puts them on LD_LIBRARY_PATH for the commands of the packages that depend on it",
			p.Name, p.Version, strings.Join(res.LibDirs, ", "), strings.Join(res.LibDirs, " --lib "))
	}
}

// repoPushAction uploads a repository directory to a registry (publish.Push).
func repoPushAction(c *cli.Context) error {
	dir, target := c.Args().Get(0), c.Args().Get(1)
	o := publish.PushOptions{Force: c.Bool("force")}
	if c.IsSet("chunk-size") {
		n, err := units.ParseSize(c.String("chunk-size"))
		if err != nil || n <= 0 {
			return usagef("repo push: --chunk-size %q: want a size above 0, such as 64MiB", c.String("chunk-size"))
		}
		o.Chunk = n
	}
	if err := pushCredentials(c, target, &o); err != nil {
		return err
	}
	o.Sent = func(what string, size int64) { say(c, "sent %s (%s)", what, units.Size(size)) }
	o.Retrying = observer(c).Retrying
	res, err := publish.Push(c.Context, dir, target, o)
	if errors.Is(err, session.ErrUnreachable) {
		return &pushUnreachableError{err}
	}
	if err != nil {
		return err
	}
	say(c, "pushed %s to %s: %s sent (%s), %s already there; manifest %s", dir, res.Ref,
		units.Count(res.Uploaded, "blob"), units.Size(res.Bytes), units.Count(res.Present, "blob"), res.Manifest)
	if len(res.External) > 0 {
		note(c, "%s the index names by URL stay there: %s", units.Count(len(res.External), "archive"), strings.Join(res.External, ", "))
	}
	return nil
}

// pushUnreachableError is a push's registry that could not be reached: advised to push
// again, not ErrUnreachable's --offline, which a push has no use for.
type pushUnreachableError struct{ error }

func (e *pushUnreachableError) Unwrap() error { return e.error }

// pushCredentials sets o's credentials for the registry at target as a repository's
// (docs/config.md#credentials): those of the configured repository whose first URL it
// is, else the variables of the name its location gives; and the netrc file.
func pushCredentials(c *cli.Context, target string, o *publish.PushOptions) error {
	rs, err := sess(c).Repositories()
	if err != nil {
		return err
	}
	r := config.Repo{Name: config.LocationName(target)}
	for _, q := range rs {
		if config.SameLocation(q.URLs[0], target) {
			r = q
		}
	}
	a, err := r.Credential()
	if err != nil {
		return err
	}
	o.Username, o.Password, o.Token = a.Username, a.Password, a.Token
	o.CredentialFrom, o.CredentialVars, o.Repo = a.From, r.CredentialVars(), r.Name
	o.Netrc, o.CleartextCredentials = config.NetrcFile(), r.CleartextCredentials
	return nil
}

func repoListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "show the repositories in effect, in the order names resolve from them: name, priority, URLs, keys and where each was given",
		Flags: []cli.Flag{jsonFlag("repos")},
		Action: func(c *cli.Context) error {
			rs, err := sess(c).Repositories()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return report.Write(c.App.Writer, report.NewRepos(report.ReposOf(rs)))
			}
			if len(rs) == 0 {
				say(c, "no repositories: pass --repo, set PKG_REPO or configure one (docs/config.md)")
			}
			for _, line := range report.ReposText(report.ReposOf(rs)) { // under --quiet too: it is what was asked for
				fmt.Fprintln(c.App.Writer, line)
			}
			return nil
		},
	}
}
