package main

import (
	"github.com/urfave/cli/v2"

	"pkg/install"
)

// tellOnce calls say unless the root records that the user was told of the condition key
// in state (install.Notices); state "" is the condition's end. say reports whether it
// printed.
func tellOnce(c *cli.Context, key, state string, say func() bool) { notices(c).Tell(key, state, say) }

// heldRoot records root as the one the command holds, for tellOnce.
func heldRoot(c *cli.Context, root *install.Root) { notices(c).Hold(root) }

func notices(c *cli.Context) *install.Notices {
	n, ok := c.App.Metadata["notices"].(*install.Notices)
	if !ok {
		n = &install.Notices{Dir: c.String("root"), Options: rootOptions(c), DryRun: c.Bool("dry-run")}
		c.App.Metadata["notices"] = n
	}
	return n
}
