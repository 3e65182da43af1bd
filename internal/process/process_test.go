package process

import (
	"math"
	"runtime"
	"runtime/debug"
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

// TestTuneHeapGrown checks that the first collection sets the percent for a grown heap.
func TestTuneHeapGrown(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "")
	TuneHeap()
	for range 100 {
		runtime.GC() // the cleanup runs on a goroutine of its own, after a collection
		if p := debug.SetGCPercent(smallPercent); p == grownPercent {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("GC percent still %d after collections; want %d", smallPercent, grownPercent)
}

func TestInterruptible(t *testing.T) {
	ctx, stop := Interruptible()
	defer stop()
	if ctx.Err() != nil {
		t.Fatal("cancelled before any signal")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done() // the test hangs, and times out, if SIGINT does not cancel it
}
