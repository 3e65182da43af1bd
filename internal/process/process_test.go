package process

import (
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"
)

func TestTuneHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	tests := []struct {
		gogc, gomemlimit string
		percent          int
		limit            int64
	}{
		{"100", "off", 100, math.MaxInt64},
		{"", "", smallPercent, MemoryLimit}, // last: its cleanup may come at any collection
	}
	for _, tt := range tests {
		t.Setenv("GOGC", tt.gogc)
		t.Setenv("GOMEMLIMIT", tt.gomemlimit)
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		TuneHeap()
		if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != tt.percent || l != tt.limit {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: percent %d, limit %d; want %d, %d", tt.gogc, tt.gomemlimit, p, l, tt.percent, tt.limit)
		}
	}
}

func TestPercentFor(t *testing.T) {
	tests := []struct {
		live uint64
		want int
	}{
		{1 << 20, smallPercent},  // more would raise the runtime's minimum goal past 16 MiB
		{4 << 20, 300},           // the next collection at 16 MiB
		{8 << 20, 100},           // so too
		{12 << 20, grownPercent}, // 18 MiB, past 16
		{1 << 30, grownPercent},
		{0, grownPercent}, // not known
	}
	for _, tt := range tests {
		if got := percentFor(tt.live); got != tt.want {
			t.Errorf("percentFor(%d) = %d; want %d", tt.live, got, tt.want)
		}
	}
}

// TestTuneHeapGrown checks that a collection sets the percent for the heap that lived
// through it: grownPercent for a grown one, more while it is small.
func TestTuneHeapGrown(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "")
	TuneHeap()
	grown := make([]byte, 2*minGoal)
	waitPercent(t, func(p int) bool { return p == grownPercent })
	runtime.KeepAlive(grown)
	waitPercent(t, func(p int) bool { return p > grownPercent })
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.NextGC > 2*minGoal {
		t.Errorf("next collection at %d MiB of heap, live %d KiB; want about %d MiB", ms.NextGC>>20, liveHeap()>>10, minGoal>>20)
	}
}

// waitPercent collects until the GC percent is one ok accepts.
func waitPercent(t *testing.T, ok func(int) bool) {
	t.Helper()
	for range 100 {
		runtime.GC() // the cleanup runs on a goroutine of its own, after a collection
		if ok(gcPercent()) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("GC percent %d after collections", gcPercent())
}

func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

func TestInterruptible(t *testing.T) {
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, os.Interrupt)
	ctx, stop := Interruptible(caught)
	defer stop()
	if ctx.Err() != nil {
		t.Fatal("cancelled before any signal")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done() // the test hangs, and times out, if SIGINT does not cancel it
}
