package main

import (
	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/install"
)

// A standing condition (an unsigned repository, a root that cannot share blocks with the
// cache) is said once per root until it changes: the root records, under the condition's
// key, the state it was in when said (install.Root.Remember), and a later command that
// finds the same state says nothing. Where there is no root yet, or the line was not
// printed (a note under --quiet), nothing is recorded, and the next command says it.

// tellOnce calls say unless the root records that the user was told of the condition
// key in state; state "" is the condition's end, which says nothing and forgets it. say
// reports whether it printed.
func tellOnce(c *cli.Context, key, state string, say func() bool) {
	told := toldState(c, key)
	switch {
	case state == told:
		return
	case state != "" && !say():
		return
	}
	pending, _ := c.App.Metadata["said"].(map[string]string)
	if pending == nil {
		pending = make(map[string]string)
		c.App.Metadata["said"] = pending
	}
	pending[key] = state
	if root, ok := c.App.Metadata["root"].(*install.Root); ok {
		remember(c, root)
	}
}

// toldState returns the state the root records for key, "" if none or if there is no root.
func toldState(c *cli.Context, key string) string {
	var state string
	if root, ok := c.App.Metadata["root"].(*install.Root); ok {
		state, _ = root.DB().SaidState(key)
		return state
	}
	peekRoot(c, func(d *db.DB) (err error) {
		state, err = d.SaidState(key)
		return err
	})
	return state
}

// remember records in root, which the command holds, what tellOnce said. A dry run
// records nothing: it leaves the root as it was.
func remember(c *cli.Context, root *install.Root) {
	pending, _ := c.App.Metadata["said"].(map[string]string)
	if c.Bool("dry-run") {
		return
	}
	for key, state := range pending {
		if root.Remember(key, state) == nil { // else said again next time
			delete(pending, key)
		}
	}
}

// heldRoot records root as the one the command holds, for tellOnce, and what was said
// before it was opened.
func heldRoot(c *cli.Context, root *install.Root) {
	c.App.Metadata["root"] = root
	remember(c, root)
}
