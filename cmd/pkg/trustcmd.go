package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
	"pkg/repo"
	"pkg/report"
	"pkg/trust"
)

func trustCommand() *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "add, list and remove the publishers' keys the root trusts, and list the repositories it pinned",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "trust a publisher's key in the root: every repository must then verify with a trusted key",
			ArgsUsage: "[REPO=]pkg-ed25519:...",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "repo-name", Usage: "trust the key for the repository of this name only"}},
			Before:    want(1, "one key, [REPO=]pkg-ed25519:..."),
			Action:    trustAddAction,
		}, noArgs(&cli.Command{
			Name:   "list",
			Usage:  "list the trusted keys, the repositories each is for, and the repositories the root pinned to their keys",
			Action: trustListAction,
		}), {
			Name:      "remove",
			Usage:     "stop trusting a key in the root, and unpin it from the repositories the root pinned to it",
			ArgsUsage: "KEY|ID",
			Before:    want(1, "one key or key id"),
			Action:    trustRemoveAction,
		}},
	}
}

// trustAddAction adds the key to the root's trusted keys (session.Trust).
func trustAddAction(c *cli.Context) error {
	k, err := trust.ParsePublicKey(c.Args().First())
	if err != nil {
		return usagef("trust add: %v", err)
	}
	if name := c.String("repo-name"); name != "" {
		if !repo.ValidRepoName(name) || k.Repo != "" && k.Repo != name {
			return usagef("trust add: --repo-name %q: want a repository name ([a-z0-9][a-z0-9._+-]*), and the key's own REPO= if it has one", name)
		}
		k.Repo = name
	}
	dir, replaced, err := sess(c).Trust(c.Context, k)
	if err != nil {
		return err
	}
	say(c, "%s", report.TrustedText(dir, k, replaced))
	return nil
}

// trustListAction prints the trusted keys, one a line with where it comes from, then the
// repositories the root pinned.
func trustListAction(c *cli.Context) error {
	sources, pins, err := sess(c).Trusted()
	if err != nil {
		return err
	}
	for _, line := range report.TrustText(sources, pins) { // under --quiet too: it is what was asked for
		fmt.Fprintln(c.App.Writer, line)
	}
	if len(pins) == 0 && !slices.ContainsFunc(sources, func(s trust.KeySource) bool { return len(s.Keys) > 0 }) {
		note(c, "no key is trusted and root %s pinned no repository: %s", c.String("root"), cmdlineOf(c).carry("'pkg trust add KEY' trusts a publisher's key", false))
	}
	return nil
}

// trustRemoveAction removes a key from the root's trusted keys and pins (session.Distrust).
func trustRemoveAction(c *cli.Context) error {
	id, ok := trust.ParseKeyID(c.Args().First())
	if !ok {
		return usagef("trust remove: %q is neither a key, [REPO=]pkg-ed25519:..., nor a key id of 16 hex digits ('pkg trust list' shows them)", id)
	}
	d, err := sess(c).Distrust(c.Context, id)
	if err != nil {
		return err
	}
	if len(d.Removed) == 0 && len(d.Unpinned) == 0 {
		return fmt.Errorf("trust remove: root %s does not trust key %s, nor pinned a repository to it (%s)", d.Dir, id, cmdlineOf(c).carry("'pkg trust list' shows the keys", false))
	}
	lines, unkeyed := report.DistrustedText(d.Dir, id, d.Removed, d.Unpinned)
	tellAll(c, say, lines)
	for _, p := range unkeyed {
		warn(c, "repository %s (%s) stays pinned, to no key now: %s", p.Location, p.Name,
			cmdlineOf(c).carry("its indexes are refused until you trust its publisher's key ('pkg trust add KEY'), or forget it ('pkg --repo "+shell.Quote(p.Location)+" repo forget')", false))
	}
	for _, name := range d.TrustedBy {
		note(c, "key %s is still trusted by %s, for this command", id, name)
	}
	return nil
}
