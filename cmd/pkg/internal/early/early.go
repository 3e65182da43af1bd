// Package early answers a lone `pkg --version` (or `-v`) from its initializer, before
// urfave/cli, the decompressors and the network packages initialize: scripts ask it often,
// and it should cost what a program's start costs. Go initializes a package after its
// imports, the ready ones in the order of their import paths; early imports only os and
// buildinfo, which imports less, so its initializer is the 24th (GODEBUG=inittrace=1 names
// 23 before it, and 122 in all for another command in the README's build). Any other
// command line, and a version buildinfo cannot read from the binary, pass through to main.
//
// For any other command the initializer also starts catching SIGINT and SIGTERM, on a
// goroutine of its own: os/signal's first Notify waits for the runtime to start a thread
// locked to its signal mask, which then overlaps the other packages' initializers rather
// than the command (a one-file install waited about 0.3 ms of its 6 for it in main;
// docs/history.md), and a signal from then on reaches the command, which acts on it once
// it runs (Caught). Before that, as in any Go program's first instants, a signal ends the
// process as a crash does.
package early

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"pkg/internal/buildinfo"
)

// IsVersion reports whether args (os.Args) ask for the version alone.
func IsVersion(args []string) bool {
	return len(args) == 2 && (args[1] == "--version" || args[1] == "-v")
}

// Line is what `pkg --version` prints of version v.
func Line(v string) string { return "pkg version " + v + "\n" }

// caught is the channel take's goroutine has SIGINT and SIGTERM sent to, once ready is
// closed; Caught hands it out once, holding handing.
var (
	caught  chan os.Signal
	ready   chan struct{}
	handing sync.Mutex
)

func init() {
	if IsVersion(os.Args) {
		if v, ok := buildinfo.Version(); ok {
			os.Stdout.WriteString(Line(v))
			os.Exit(0)
		}
	}
	take()
}

// take has SIGINT and SIGTERM sent to a new caught from a goroutine of its own.
func take() {
	c, r := make(chan os.Signal, 1), make(chan struct{})
	caught, ready = c, r
	go func() {
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		close(r)
	}()
}

// Caught returns a channel that SIGINT and SIGTERM are sent to, a signal that came since
// the initializer took them waiting in it. The first call gets the initializer's, once its
// goroutine has taken them; a later one (a test running several commands in one process,
// the first having given its channel's signals back) a new one, taken at once.
func Caught() chan os.Signal {
	handing.Lock()
	defer handing.Unlock()
	if ready != nil {
		<-ready
		ready = nil
		return caught
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	return c
}
