// Package early answers a lone `pkg --version` (or `-v`) from its initializer, before
// urfave/cli, the decompressors and the network packages initialize: scripts ask it often,
// and it should cost what a program's start costs. Go initializes a package after its
// imports, the ready ones in the order of their import paths; early imports only os and
// buildinfo, which imports less, so its initializer is the 24th of the binary's 121
// (GODEBUG=inittrace=1). Any other command line passes through untouched.
package early

import (
	"os"

	"pkg/internal/buildinfo"
)

// IsVersion reports whether args (os.Args) ask for the version alone.
func IsVersion(args []string) bool {
	return len(args) == 2 && (args[1] == "--version" || args[1] == "-v")
}

// VersionLine is what `pkg --version` prints.
func VersionLine() string { return "pkg version " + buildinfo.Version() + "\n" }

func init() {
	if IsVersion(os.Args) {
		os.Stdout.WriteString(VersionLine())
		os.Exit(0)
	}
}
