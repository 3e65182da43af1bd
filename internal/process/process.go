// Package process sets up a pkg process: the Go heap's collection and soft limit, and the
// context that an interrupt cancels.
package process

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
)

// MemoryLimit is the soft limit of the Go heap that TuneHeap sets.
const MemoryLimit = 160 << 20 // 160 MiB

// Collection while a command's heap is small, and once it has grown (see TuneHeap).
const (
	smallPercent = 400 // the first collection at 16 MiB: the runtime's 4 MiB minimum, scaled
	grownPercent = 50
)

// TuneHeap sets the collector for pkg's commands, unless GOGC or GOMEMLIMIT says otherwise.
func TuneHeap() {
	if os.Getenv("GOGC") == "" {
		// Most commands (verify, list, the install of a toolchain) allocate a few MiB and
		// exit, and a collection costs them its time and its threads: none comes before
		// 16 MiB. A heap that grows past it is mostly member lists that live for the
		// command: from the first collection on, half the default growth bounds a large
		// install's peak RSS (docs/history.md).
		debug.SetGCPercent(smallPercent)
		runtime.AddCleanup(new([64]byte), func(int) {
			if p := debug.SetGCPercent(grownPercent); p != smallPercent { // set since: kept
				debug.SetGCPercent(p)
			}
		}, 0)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// Near the limit the collector runs as often as it must (at most half the CPU),
		// which lowers the peak of an archive at tarutil's limits (bench/names.sh,
		// docs/history.md).
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
