package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pkg/internal/shell"
	"pkg/repo"
	"pkg/report"
	"pkg/session"
	"pkg/trust"
)

// defaultExpires is how long a signed index stays valid unless told: long enough for a
// monthly release, short enough that a frozen mirror is noticed within a month.
const defaultExpires = 30 * 24 * time.Hour

// signFlags are the flags of a command that signs a repository's index.
func signFlags(keyUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "key", Usage: keyUsage, TakesFile: true},
		&cli.DurationFlag{Name: "expires", Value: defaultExpires, Usage: "how long the signed index stays valid"},
	}
}

func repoKeygenCommand() *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "make a signing key: the private key to a new file (mode 0600), the public key to stdout",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "file to write the private key to (required)", TakesFile: true},
		},
		Action: func(c *cli.Context) error {
			path := c.String("output")
			if path == "" {
				return usagef("repo keygen: -o KEYFILE is required")
			}
			k, err := trust.GenerateKey()
			if err != nil {
				return err
			}
			if err := trust.WriteKeyFile(path, k); err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, k.Public())
			note(c, "wrote signing key %s to %s: keep it secret, publish the public key above", k.Public().ID(), path)
			return nil
		},
	}
}

func repoSignCommand() *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "sign a repository's index: set its name, next version and expiry, write index.json.sig",
		ArgsUsage: "REPO_DIR",
		Flags: append(signFlags("signing key file from 'pkg repo keygen' (required; repeatable)"),
			&cli.StringFlag{Name: "name", Usage: "the repository's name (default: the index's, else the directory's)"}),
		Before: want(1, "REPO_DIR"),
		Action: func(c *cli.Context) error {
			s, keys, err := newSigner(c, c.String("name"))
			if err != nil {
				return err
			}
			if s == nil {
				return usagef("repo sign: --key is required")
			}
			ix, err := repo.Sign(c.Context, c.Args().First(), s)
			if err != nil {
				return err
			}
			saySigned(c, c.Args().First(), ix.Meta, keys)
			return nil
		},
	}
}

// newSigner reads the --key files and returns a signer of indexes valid for --expires, or
// nil without keys.
func newSigner(c *cli.Context, name string) (*repo.Signer, []trust.PrivateKey, error) {
	if c.Duration("expires") <= 0 {
		return nil, nil, usagef("%s: --expires must be positive", c.Command.Name)
	}
	keys, exposed, err := trust.ReadSigningKeys(c.StringSlice("key"))
	for _, e := range exposed {
		warn(c, "%v", e)
	}
	return trust.NewSigner(name, time.Now().Add(c.Duration("expires")), keys), keys, err
}

// sayIndex says what an add did to dir's index, of Meta m as it is now: signed it, given
// signer, where it wrote it; left it as it was, where it did not.
func sayIndex(c *cli.Context, dir string, written bool, m repo.Meta, signer *repo.Signer, keys []trust.PrivateKey) {
	switch {
	case !written:
		say(c, "%s", report.UnchangedText(dir, m, signer != nil))
		if signer != nil && c.IsSet("expires") && m.Expires.Before(time.Now().Add(c.Duration("expires")/2)) {
			note(c, "%s", keptExpiry(c, dir, m.Expires))
		}
	case signer != nil:
		saySigned(c, dir, m, keys)
	}
}

// durationText is d as time.Duration.String writes it, without its zero minutes and
// seconds after a larger unit: 720h, not 720h0m0s.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// keptExpiry says that an add which changed no entry kept the index's signature, which
// expires at was, in less than half the --expires given (sayIndex), and how to sign it
// again for all of it.
func keptExpiry(c *cli.Context, dir string, was time.Time) string {
	line := "pkg repo sign " + shell.Quote(dir)
	for _, k := range c.StringSlice("key") {
		line += " --key " + shell.Quote(k)
	}
	d := durationText(c.Duration("expires"))
	line += " --expires " + d
	return fmt.Sprintf("its signature still expires %s, in less than half the --expires %s: an add that changes no entry signs nothing; '%s' signs it again", was.Format(time.RFC3339), d, line)
}

// saySigned reports a signed index and the public keys that verify it.
func saySigned(c *cli.Context, dir string, m repo.Meta, keys []trust.PrivateKey) {
	say(c, "signed %s: repository %s, version %d, expires %s", dir, m.Name, m.Version, m.Expires.Format(time.RFC3339))
	for _, k := range keys {
		say(c, "verify with key %s: %s", k.Public().ID(), k.Public())
	}
}

func repoForgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "forget the signed index of a repository (the first in use, or the one named) that the root and the cache accepted last, and the keys the root pinned it to, so that a repository its publisher started over, or stopped signing, is accepted again",
		ArgsUsage: "[NAME]",
		Before:    takes(0, 1, ""),
		Action: func(c *cli.Context) error {
			f, err := sess(c).Forget(c.Context, c.Args().First())
			if ue := (*session.UnknownRepoError)(nil); errors.As(err, &ue) {
				return usagef("repo forget: %v", err)
			} else if f == nil {
				return err
			}
			for _, r := range f.Gone {
				say(c, "forgot version %d of repository %s, accepted from %s", r.Version, r.Name, r.Location)
			}
			if f.InRoot && len(f.Gone) == 0 {
				note(c, "the root has no record of %s; if an index from it is refused as older than one accepted from another location, forget that location (pkg --repo LOCATION repo forget)", f.URL)
			}
			if err != nil {
				return err
			}
			say(c, "forgot the index of %s: its next signed index is accepted at any version", f.URL)
			return nil
		},
	}
}
