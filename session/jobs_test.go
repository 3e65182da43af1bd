package session

import (
	"runtime"
	"testing"
)

func TestDefaultJobs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 2, 2: 4, 8: 4} {
		runtime.GOMAXPROCS(procs)
		if got := DefaultJobs(); got != want {
			t.Errorf("GOMAXPROCS %d: DefaultJobs() = %d, want %d", procs, got, want)
		}
	}
}
