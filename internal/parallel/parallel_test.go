package parallel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestEach runs every job at most jobs at once, and stops at the first error, which it
// returns rather than the cancellation the others saw.
func TestEach(t *testing.T) {
	var running, most, done atomic.Int32
	err := Each(t.Context(), 20, 3, func(ctx context.Context, i int) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		done.Add(1)
		return nil
	})
	if err != nil || done.Load() != 20 || most.Load() > 3 {
		t.Fatalf("Each: %v, %d jobs done, %d at once; want nil, 20, at most 3", err, done.Load(), most.Load())
	}

	boom := errors.New("boom")
	var started atomic.Int32
	err = Each(t.Context(), 100, 1, func(ctx context.Context, i int) error {
		started.Add(1)
		if i == 2 {
			return boom
		}
		return ctx.Err()
	})
	if !errors.Is(err, boom) || started.Load() != 3 {
		t.Fatalf("Each with a failing job: %v after %d jobs, want boom after 3", err, started.Load())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Each(ctx, 5, 2, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Each of a cancelled context: %v, want context.Canceled", err)
	}
}

// TestEachWorker gives each job a worker number below jobs, and runs a worker's jobs one
// at a time, so that what it keeps by that number needs no lock.
func TestEachWorker(t *testing.T) {
	const jobs = 3
	var busy [jobs]atomic.Bool
	var done atomic.Int32
	err := EachWorker(t.Context(), 50, jobs, func(ctx context.Context, w, i int) error {
		if w < 0 || w >= jobs {
			return fmt.Errorf("job %d on worker %d, want one of 0 to %d", i, w, jobs-1)
		}
		if !busy[w].CompareAndSwap(false, true) {
			return fmt.Errorf("job %d on worker %d while it runs another", i, w)
		}
		defer busy[w].Store(false)
		done.Add(1)
		return nil
	})
	if err != nil || done.Load() != 50 {
		t.Fatalf("EachWorker: %v, %d jobs done; want nil, 50", err, done.Load())
	}
}
