package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
)

func repoCommand() *cli.Command {
	return &cli.Command{
		Name:  "repo",
		Usage: "maintain a repository directory",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "copy an archive into a repository and add it to the index",
			ArgsUsage: "REPO_DIR ARCHIVE",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "name", Usage: "package name (required but for a .deb: its Package)"},
				&cli.StringFlag{Name: "version", Usage: "package version (required but for a .deb: its Version)"},
				&cli.StringSliceFlag{Name: "depends", Usage: "a dependency: name, name=V, name>=V, name<V (repeatable)"},
				&cli.StringSliceFlag{Name: "bin", Usage: "an executable's path inside the package (repeatable)"},
				&cli.StringFlag{Name: "summary", Usage: "one line describing the package (for a .deb: its Description's first line)"},
				&cli.BoolFlag{Name: "replace", Usage: "replace the entry of the same name and version, if it differs"},
			}, signFlags("sign the new index with this key file, as 'pkg repo sign' does (repeatable)")...),
			Action: repoAddAction,
		}, noArgs(repoKeygenCommand()), repoSignCommand(), noArgs(repoForgetCommand())},
	}
}

// noArgs makes cmd, whose action reads no arguments, refuse any.
func noArgs(cmd *cli.Command) *cli.Command {
	cmd.Before = func(c *cli.Context) error { return maxArgs(c, 0) }
	return cmd
}

// readRepoIndex returns the index in dir, or an empty one if it cannot be read, and
// whether dir has none.
func readRepoIndex(dir string) (ix *repo.Index, missing bool) {
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return &repo.Index{}, errors.Is(err, fs.ErrNotExist)
	}
	if ix, err = repo.Parse(data); err != nil {
		return &repo.Index{}, false
	}
	return ix, false
}

func repoAddAction(c *cli.Context) error {
	if err := maxArgs(c, 2); err != nil {
		return err
	}
	if c.NArg() < 2 {
		return usagef("repo add: want REPO_DIR ARCHIVE, got %s", count(c.NArg(), "argument"))
	}
	dir, archive := c.Args().Get(0), c.Args().Get(1)
	st, err := fetch.Inspect(archive)
	if err != nil {
		return err
	}
	name, version, summary := c.String("name"), c.String("version"), c.String("summary")
	if ctl := st.Control; ctl != nil {
		if version == "" {
			if version, err = debVersion(ctl.Version); err != nil {
				return fmt.Errorf("repo add %s: %v", archive, err)
			}
		}
		name = cmp.Or(name, ctl.Package)
		if !c.IsSet("summary") {
			summary = ctl.Description
		}
		if ctl.Depends != "" && !c.IsSet("depends") {
			note(c, "%s depends on %s: Debian's names, not recorded (give the pkg packages it needs with --depends)", archive, ctl.Depends)
		}
	}
	if name == "" || version == "" {
		return usagef("repo add: --name and --version are required (a .deb's control file gives them)")
	}
	if err := install.CheckRunnable(c.StringSlice("bin"), st.Members); err != nil {
		return fmt.Errorf("repo add %s %s: %w", name, version, err)
	}
	signer, keys, err := newSigner(c, "")
	if err != nil {
		return err
	}
	before, created := readRepoIndex(dir)
	add := repo.Package{
		Name: name, Version: version, Depends: c.StringSlice("depends"),
		Bin: c.StringSlice("bin"), Summary: summary, InstalledSize: st.Bytes, Files: st.Files,
	}
	if !c.Bool("replace") {
		if err := checkRepublish(dir, archive, before, add); err != nil {
			return err
		}
	}
	p, meta, err := repo.AddSigned(dir, archive, add, signer)
	if err != nil {
		return err
	}
	if created {
		note(c, "%s had no index.json: this is a new repository", dir)
	}
	say(c, "added %s %s to %s: %s, %s, %s, sha256 %s", p.Name, p.Version, dir, p.Archive, size(p.Size), count(p.Files, "file"), p.SHA256)
	if rel, ok := repo.PreRelease(p.Version); ok {
		note(c, "%s is a pre-release of %s: it sorts before %s, and installs take a release while there is one (a packaging revision of %s is written %s+1)",
			p.Version, rel, rel, rel, rel)
	}
	for _, q := range before.Packages {
		if q.Name == p.Name && q.Version == p.Version {
			note(c, "this replaced the entry of %s %s (archive %s, depends %q, bin %q)", q.Name, q.Version, q.Archive, q.Depends, q.Bin)
		}
	}
	for _, d := range p.Depends { // the index now holds before's packages and p
		r, err := repo.ParseRequirement(d)
		if err == nil && r.Name != p.Name && !slices.ContainsFunc(before.Packages, func(q repo.Package) bool { return q.Name == r.Name }) {
			note(c, "%s %s depends on %s, which %s does not offer (yet)", p.Name, p.Version, d, dir)
		}
	}
	if signer != nil {
		saySigned(c, dir, meta, keys)
	}
	return nil
}

// checkRepublish refuses to add p, from archive, to the repository dir whose index is ix,
// when ix has the same name and version with another archive or other metadata: users
// who installed it would hold something the index no longer describes.
func checkRepublish(dir, archive string, ix *repo.Index, p repo.Package) error {
	i := slices.IndexFunc(ix.Packages, func(q repo.Package) bool { return q.Name == p.Name && q.Version == p.Version })
	if i < 0 {
		return nil
	}
	q := ix.Packages[i]
	_, sum, err := repo.HashFile(archive)
	if err != nil {
		return err
	}
	same := sum == q.SHA256 && slices.Equal(q.Depends, p.Depends) &&
		slices.Equal(q.Bin, p.Bin) && q.Summary == p.Summary
	if same {
		return nil
	}
	return fmt.Errorf("repo add: %s already has %s %s (archive %s, sha256 %s), which this would change under the users who installed it: publish a new version, or pass --replace",
		dir, q.Name, q.Version, q.Archive, q.SHA256)
}

// debVersion is the pkg version of a .deb's Version (deb-version(7)): its Debian revision,
// after the last "-", is a packaging revision, written after "+" in pkg ("1.2-3" is
// "1.2+3"); "~" means a pre-release in both. An epoch ("1:") has no pkg equivalent.
func debVersion(v string) (string, error) {
	if strings.Contains(v, ":") {
		return "", fmt.Errorf("control Version %q has an epoch, which a pkg version cannot express: give one with --version", v)
	}
	if i := strings.LastIndexByte(v, '-'); i > 0 {
		v = v[:i] + "+" + v[i+1:]
	}
	return v, nil
}
