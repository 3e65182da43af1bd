// Package process sets up a pkg process: the Go heap's collection and soft limit, and the
// context that an interrupt cancels.
package process

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// MemoryLimit is the soft limit of the Go heap that TuneHeap sets.
const MemoryLimit = 160 << 20 // 160 MiB

// Collection: none before the heap reaches minGoal; past it, at grownPercent more than the
// heap that lived through the last one (see TuneHeap).
const (
	minGoal      = 16 << 20 // 16 MiB
	smallPercent = minGoal / runtimeMinGoal * 100
	grownPercent = 50
)

// runtimeMinGoal is the runtime's least heap goal at GOGC=100, scaled by the percent set
// (heapMinimum, runtime/mgcpacer.go): at smallPercent, minGoal.
const runtimeMinGoal = 4 << 20 // 4 MiB

// TuneHeap sets the collector for pkg's commands, unless GOGC or GOMEMLIMIT says otherwise.
func TuneHeap() {
	if os.Getenv("GOGC") == "" {
		// Most commands (verify, list, the install of a toolchain) allocate a few MiB and
		// exit, and a collection costs them its time and its threads: none comes before
		// minGoal, nor after a collection while the heap stays under it (a warm install
		// of the npm tree of bench/peers.sh: 8 collections at a live heap of 3-9 MiB
		// otherwise). A heap that grows past it is mostly member lists that live for the
		// command: half the default growth bounds a large install's peak RSS
		// (docs/history.md).
		debug.SetGCPercent(smallPercent)
		watchHeap(smallPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// Near the limit the collector runs as often as it must (at most half the CPU),
		// which lowers the peak of an archive at tarutil's limits (bench/names.sh,
		// docs/history.md).
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// watchHeap sets the percent after each collection (percentFor the heap that lived through
// it), for as long as nothing else has changed it from set, the percent it set last.
func watchHeap(set int) {
	runtime.AddCleanup(new([64]byte), func(int) {
		want := percentFor(liveHeap())
		if p := debug.SetGCPercent(want); p != set { // set since: kept
			debug.SetGCPercent(p)
			return
		}
		watchHeap(want)
	}, 0)
}

// percentFor returns the percent that puts the next collection at minGoal, or at
// grownPercent more than live if that is later. It is at most smallPercent: more would
// raise the runtime's least goal past minGoal (up to MemoryLimit for a live heap of a few
// hundred KiB).
func percentFor(live uint64) int {
	if live == 0 || live >= minGoal*100/(100+grownPercent) {
		return grownPercent
	}
	return min(int(minGoal*100/live)-100, smallPercent)
}

// liveHeap returns the bytes of heap objects marked live by the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Interruptible returns a context that the first signal sent to caught (SIGINT or SIGTERM,
// as signal.Notify registered it) cancels: downloads stop and remove what they wrote, and a
// command not yet committing changes nothing. A second signal kills the process at once,
// which the commit protocol makes as safe as a crash. stop cancels the context and gives
// the signals back from a goroutine of their own: taking them back waits on the runtime's
// signal thread, which a process about to exit need not do (docs/history.md): a signal
// between stop and the goroutine's taking them back is ignored, the command having
// finished; one after it ends the process, as before stop.
func Interruptible(caught chan os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, stop = context.WithCancel(context.Background())
	go func() {
		select {
		case <-caught:
			stop()
		case <-ctx.Done():
		}
		signal.Stop(caught)
	}()
	return ctx, stop
}
