package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"pkg/install"
)

// pathHint follows an install or sync whose commit ended in err: once it committed
// (err nil, or only command links wrong), it says, the first time, how to put the root's
// bin/ on PATH when it is not. It returns err.
func pathHint(c *cli.Context, root *install.Root, err error) error {
	if links := (*install.LinksError)(nil); err != nil && !errors.As(err, &links) {
		return err
	}
	bin := filepath.Join(root.Dir(), "bin")
	if ents, _ := os.ReadDir(bin); len(ents) == 0 || onPath(bin, os.Getenv("PATH")) {
		tellOnce(c, "path", "", nil) // said again once bin/ leaves PATH
		return err
	}
	tellOnce(c, "path", bin, func() bool {
		if c.Bool("quiet") {
			return false
		}
		note(c, "%s is not on PATH; to run the commands pkg installs there, add it in your shell's profile: export PATH=%s", bin, shellQuote(bin+":")+`"$PATH"`)
		return true
	})
	return err
}

// onPath reports whether dir is one of the directories of path, a PATH value.
func onPath(dir, path string) bool {
	want, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for _, d := range filepath.SplitList(path) {
		if info, err := os.Stat(d); err == nil && filepath.IsAbs(d) && os.SameFile(info, want) {
			return true
		}
	}
	return false
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
