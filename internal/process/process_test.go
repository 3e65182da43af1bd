package process

import (
	"math"
	"runtime/debug"
	"syscall"
	"testing"
)

func TestTuneHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	tests := []struct {
		gogc, gomemlimit string
		percent          int
		limit            int64
	}{
		{"", "", 50, MemoryLimit},
		{"100", "off", 100, math.MaxInt64},
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
