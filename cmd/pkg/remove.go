package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"

	"github.com/urfave/cli/v2"
)

func removeCommand() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "remove installed packages",
		ArgsUsage: "NAME...",
		Flags:     planFlags(),
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, "package name"); err != nil {
				return err
			}
			if err := checkPlanFlags(c); err != nil {
				return err
			}
			names := unique(c.Args().Slice())
			if err := rootExists(c); err != nil {
				return fmt.Errorf("remove %s: not installed: %w", strings.Join(names, " "), err)
			}
			if c.Bool("dry-run") {
				recs, err := peekRecords(c)
				if err == nil {
					err = needInstalled("remove", names, recs)
				}
				if err != nil {
					return err
				}
				return showPlan(c, txn.RemovePlan(c.String("root"), recs, names))
			}
			root, err := openRoot(c)
			if err != nil {
				return err
			}
			defer root.Close()
			recs, err := root.DB().List()
			if err == nil {
				err = needInstalled("remove", names, recs)
			}
			if err != nil {
				return err
			}
			return apply(c, root, txn.RemovePlan(root.Dir(), recs, names), nil)
		},
	}
}

// saySalvaged says what the last change kept of the trees it replaced or removed: files
// the user added to a package's directory, or changed in it. It says so under --quiet too.
func saySalvaged(c *cli.Context, root *install.Root) {
	for _, s := range root.Salvaged() {
		if len(s.Paths) > 0 {
			list := strings.Join(s.Paths[:min(len(s.Paths), 5)], ", ")
			if more := len(s.Paths) - 5; more > 0 {
				list += fmt.Sprintf(" and %d more", more)
			}
			warn(c, "the directory of %s %s held %s that it did not install or that changed since: kept in %s: %s",
				s.Name, s.Version, count(len(s.Paths), "path"), s.Dir, list)
		}
		rest := "the directory"
		if len(s.Paths) > 0 {
			rest = "the rest of the directory"
		}
		switch {
		case s.Err != nil:
			warn(c, "%s of %s %s held what pkg could not sort out, and could not be kept (%s): it stays under %s for the next pkg command to keep",
				rest, s.Name, s.Version, userText(s.Err), filepath.Join(root.Dir(), ".pkg"))
		case s.Tree != "":
			warn(c, "%s of %s %s held what pkg could not sort out (a part it could not read or move): kept whole in %s", rest, s.Name, s.Version, s.Tree)
		}
	}
}

// sayChanges says, after a change to the root that held before, which commands a package
// kept across the change no longer has or now has, and which packages that another one
// depended on are now needed by none, but for those wanted reports the user asked for
// (pkg removes none by itself: the user may have asked for them before).
func sayChanges(c *cli.Context, root *install.Root, before []db.Package, wanted func(name string) bool) {
	after, err := root.DB().List()
	if err != nil {
		return
	}
	was := make(map[string]db.Package, len(before))
	for _, p := range before {
		was[p.Name] = p
	}
	for _, p := range after {
		old, ok := was[p.Name]
		if !ok || slices.Equal(old.Bin, p.Bin) {
			continue
		}
		gone, added := commandNames(old.Bin, p.Bin), commandNames(p.Bin, old.Bin)
		switch {
		case len(gone) > 0 && len(added) > 0:
			say(c, "%s %s has command %s in place of %s", p.Name, p.Version, strings.Join(added, ", "), strings.Join(gone, ", "))
		case len(gone) > 0:
			say(c, "%s %s no longer has command %s", p.Name, p.Version, strings.Join(gone, ", "))
		case len(added) > 0:
			say(c, "%s %s now has command %s", p.Name, p.Version, strings.Join(added, ", "))
		}
	}
	needed, neededBefore := dependedOn(after), dependedOn(before)
	for _, p := range after {
		if neededBefore[p.Name] && !needed[p.Name] && !wanted(p.Name) {
			say(c, "%s %s is no longer needed by another package ('pkg remove %s' removes it)", p.Name, p.Version, p.Name)
		}
	}
}

// commandNames returns the command names of bin entries a that b lacks.
func commandNames(a, b []string) []string {
	var names []string
	for _, p := range a {
		name, _ := repo.SplitBin(p)
		if !slices.ContainsFunc(b, func(q string) bool { n, _ := repo.SplitBin(q); return n == name }) {
			names = append(names, name)
		}
	}
	return names
}

// dependedOn returns the names that a package of pkgs depends on.
func dependedOn(pkgs []db.Package) map[string]bool {
	on := make(map[string]bool)
	for _, p := range pkgs {
		for _, d := range p.Depends {
			if r, err := repo.ParseRequirement(d); err == nil {
				on[r.Name] = true
			}
		}
	}
	return on
}
