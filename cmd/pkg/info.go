package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"pkg/db"
	"pkg/install"
	"pkg/internal/units"
	"pkg/repo"
	"pkg/report"
	"pkg/txn"

	"github.com/urfave/cli/v2"
)

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:         "info",
		Usage:        "show a package: as installed, or as the repository offers it",
		ArgsUsage:    "NAME",
		Flags:        []cli.Flag{jsonFlag("info")},
		BashComplete: completeInstalled,
		Action:       infoAction,
	}
}

func infoAction(c *cli.Context) error {
	name, err := oneArg(c, "package name")
	if err != nil {
		return err
	}
	if err := installedNames("info", []string{name}); err != nil {
		return err
	}
	var p *db.Package
	var installed []db.Package
	var requested map[string]string
	err = viewRoot(c, func(d *db.DB) (err error) {
		if p, err = d.Get(name); errors.Is(err, db.ErrNotInstalled) {
			installed, _ = d.List() // for a suggestion only
		} else if err == nil {
			requested, err = d.Requested()
		}
		return err
	})
	notHere := errors.Is(err, db.ErrNotInstalled) || errors.Is(err, install.ErrNoRoot)
	switch {
	case notHere && hasRepos(c):
		return offeredInfo(c, name, installed)
	case errors.Is(err, db.ErrNotInstalled):
		return notInstalled("info", name, installed)
	case errors.Is(err, install.ErrNoRoot):
		return fmt.Errorf("info %s: not installed: %w", name, err)
	case err != nil:
		return err
	}
	dir, err := filepath.Abs(c.String("root"))
	if err != nil {
		return err
	}
	info := report.InstalledInfo(p, filepath.Join(dir, "pkgs", p.Name), requested[p.Name])
	if c.Bool("json") {
		return printJSON(c, info)
	}
	return printInfo(c.App.Writer, info)
}

// offeredInfo shows name, which is not among installed, as the repository offers it: the
// version a new install takes.
func offeredInfo(c *cli.Context, name string, installed []db.Package) error {
	_, ix, err := openFetcher(c, false)
	if err != nil {
		return err
	}
	p, err := ix.Lookup(repo.Requirement{Name: name})
	if len(ix.Versions(name)) == 0 {
		var names []string
		for _, q := range append(txn.Installed(installed), ix.Search("")...) {
			names = append(names, q.Name)
		}
		return fmt.Errorf("info %s: not installed, and %s has no package of that name%s", name, ix.Source, repo.DidYouMean(name, unique(names)))
	} else if err != nil {
		return err
	}
	info := report.OfferedInfo(p, ix.Versions(name))
	if c.Bool("json") {
		return printJSON(c, info)
	}
	return printInfo(c.App.Writer, info)
}

// printInfo prints info, leaving out empty fields.
func printInfo(w io.Writer, p report.Info) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "name:\t%s\nversion:\t%s\n", p.Name, p.Version)
	fields := [][2]string{{"summary", p.Summary}, {"depends", strings.Join(p.Depends, ", ")},
		{"bin", strings.Join(p.Bin, ", ")}, {"lib", strings.Join(p.Lib, ", ")}}
	if p.Files > 0 || p.Installed {
		fields = append(fields, [2]string{"files", fmt.Sprint(p.Files)})
	}
	if p.Size > 0 || p.Installed {
		fields = append(fields, [2]string{"size", units.Size(p.Size)})
	}
	if p.ArchiveSize > 0 {
		fields = append(fields, [2]string{"download", units.Size(p.ArchiveSize)})
	}
	fields = append(fields, [2]string{"sha256", p.SHA256})
	for _, f := range fields {
		if f[1] != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
		}
	}
	if !p.Installed {
		fmt.Fprintf(tw, "installed:\tno ('pkg install %s' installs it)\nversions:\t%s\n", p.Name, strings.Join(p.Versions, ", "))
		return tw.Flush()
	}
	req := "no (installed as a dependency)"
	if p.Requested != "" {
		req = "yes, as " + p.Requested
	}
	fmt.Fprintf(tw, "requested:\t%s\n", req)
	fmt.Fprintf(tw, "installed:\t%s\ndirectory:\t%s\n", p.InstalledAt.Local().Format(time.RFC3339), p.Directory)
	return tw.Flush()
}
