package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pkg/install"
	"pkg/internal/shell"
)

// pathHint follows an install or sync whose commit ended in err: once it committed
// (err nil, or only command links wrong), it says, the first time, how to put the root's
// bin/ on PATH when it is not. It returns err.
func pathHint(c *cli.Context, root *install.Root, err error) error {
	if links := (*install.LinksError)(nil); err != nil && !errors.As(err, &links) {
		return err
	}
	bin := filepath.Join(root.Dir(), "bin")
	if ents, _ := os.ReadDir(bin); len(ents) == 0 || shell.OnPath(bin, os.Getenv("PATH")) {
		tellOnce(c, "path", "", nil) // said again once bin/ leaves PATH
		return err
	}
	tellOnce(c, "path", bin, func() bool {
		if c.Bool("quiet") {
			return false
		}
		note(c, "%s is not on PATH; to run the commands pkg installs there, add it in your shell's profile: export PATH=%s", bin, shell.Quote(bin+":")+`"$PATH"`)
		return true
	})
	return err
}
