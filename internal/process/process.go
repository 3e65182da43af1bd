// Package process sets up a pkg process: the Go heap's collection and soft limit, and the
// context that an interrupt cancels.
package process

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// MemoryLimit is the soft limit of the Go heap that TuneHeap sets.
const MemoryLimit = 160 << 20 // 160 MiB

// TuneHeap sets the collector for pkg's commands, unless GOGC or GOMEMLIMIT says otherwise.
func TuneHeap() {
	if os.Getenv("GOGC") == "" {
		// The heap is mostly member lists that live for one command: collecting at half the
		// default growth keeps an 80,000-file install's peak RSS at 55 MiB rather than 70,
		// for a few more short collections.
		debug.SetGCPercent(50)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// Near the limit the collector runs as often as it must (at most half the CPU): for
		// an archive at tarutil's limits, fetch peaks at 169 MiB RSS, not 197 (CASES=max
		// bench/names.sh, with and without GOMEMLIMIT=off); install at 235 MiB.
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// Interruptible returns a context that the first SIGINT or SIGTERM cancels: downloads stop
// and remove what they wrote, and a command not yet committing changes nothing. A second
// signal kills the process at once, which the commit protocol makes as safe as a crash.
func Interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
