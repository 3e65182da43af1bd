// Package early answers a lone `pkg --version` (or `-v`) from its initializer, before
// urfave/cli, the decompressors and the network packages initialize: scripts ask it often,
// and it should cost what a program's start costs. Go initializes a package after its
// imports, the ready ones in the order of their import paths; early imports only os and
// buildinfo, which imports less, so its initializer is the 24th (GODEBUG=inittrace=1 names
// 23 before it, and 122 in all for another command in the README's build). Any other
// command line, and a version buildinfo cannot read from the binary, pass through to main.
package early

import (
	"os"

	"pkg/internal/buildinfo"
)

// IsVersion reports whether args (os.Args) ask for the version alone.
func IsVersion(args []string) bool {
	return len(args) == 2 && (args[1] == "--version" || args[1] == "-v")
}

// Line is what `pkg --version` prints of version v.
func Line(v string) string { return "pkg version " + v + "\n" }

func init() {
	if IsVersion(os.Args) {
		if v, ok := buildinfo.Version(); ok {
			os.Stdout.WriteString(Line(v))
			os.Exit(0)
		}
	}
}
