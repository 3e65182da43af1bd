package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"pkg/install"
	"pkg/internal/shell"
)

// pathHint follows an install or sync whose commit ended in err: once it committed
// (err nil, or only command links wrong), it says, the first time, how to put the root's
// bin/ on PATH when it is not; once bin/ is on PATH it is said again after it leaves. It
// returns err.
func pathHint(c *cli.Context, root *install.Root, err error) error {
	if links := (*install.LinksError)(nil); err != nil && !errors.As(err, &links) {
		return err
	}
	bin := root.BinOffPath(os.Getenv("PATH"))
	tellOnce(c, "path", bin, func() bool {
		if c.Bool("quiet") {
			return false
		}
		note(c, "%s is not on PATH; to run the commands pkg installs there, add it in your shell's profile: export PATH=%s", bin, shell.Quote(bin+":")+`"$PATH"`)
		return true
	})
	return err
}
