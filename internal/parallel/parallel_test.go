package parallel

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
// at a time, so that what it keeps by that number needs no lock: the first jobs wait for
// each other, so that the workers overlap.
func TestEachWorker(t *testing.T) {
	const jobs = 3
	var busy [jobs]atomic.Bool
	var done, arrived atomic.Int32
	together := make(chan struct{})
	err := EachWorker(t.Context(), 50, jobs, func(ctx context.Context, w, i int) error {
		if w < 0 || w >= jobs {
			return fmt.Errorf("job %d on worker %d, want one of 0 to %d", i, w, jobs-1)
		}
		if !busy[w].CompareAndSwap(false, true) {
			return fmt.Errorf("job %d on worker %d while it runs another", i, w)
		}
		defer busy[w].Store(false)
		if i < jobs {
			if arrived.Add(1) == jobs {
				close(together)
			}
			select {
			case <-together:
			case <-time.After(time.Minute): // a hang: the workers never overlap
				return fmt.Errorf("job %d on worker %d: the first %d jobs never ran at once", i, w, jobs)
			}
		}
		done.Add(1)
		return nil
	})
	if err != nil || done.Load() != 50 {
		t.Fatalf("EachWorker: %v, %d jobs done; want nil, 50", err, done.Load())
	}

	for _, c := range []struct{ n, jobs, calls, workers int }{
		{0, 3, 0, 0},
		{5, 0, 5, 1},
		{5, -2, 5, 1},
		{2, 8, 2, 2},
	} {
		var calls atomic.Int32
		var seen sync.Map
		err := EachWorker(t.Context(), c.n, c.jobs, func(_ context.Context, w, i int) error {
			calls.Add(1)
			seen.Store(w, true)
			if w < 0 || w >= max(c.jobs, 1) || w >= c.n {
				return fmt.Errorf("job %d on worker %d", i, w)
			}
			return nil
		})
		workers := 0
		seen.Range(func(any, any) bool { workers++; return true })
		if err != nil || int(calls.Load()) != c.calls || workers > c.workers {
			t.Errorf("EachWorker of %d jobs, %d at once: %v, %d calls on %d workers; want nil, %d calls on at most %d",
				c.n, c.jobs, err, calls.Load(), workers, c.calls, c.workers)
		}
	}
}

// TestEachWorkerPanic: a job's panic on the caller's worker reaches the caller once the
// other workers, their context cancelled, have returned.
func TestEachWorkerPanic(t *testing.T) {
	started := make(chan struct{})
	var finished atomic.Bool
	got := func() (p any) {
		defer func() { p = recover() }()
		EachWorker(t.Context(), 2, 2, func(ctx context.Context, w, i int) error {
			if w == 0 {
				close(started)
				<-ctx.Done()
				runtime.Gosched()
				finished.Store(true)
				return nil
			}
			select { // the caller's worker, the last
			case <-started:
			case <-time.After(time.Minute):
				return errors.New("worker 0 never started its job")
			}
			panic("boom")
		})
		return nil
	}()
	if got != "boom" || !finished.Load() {
		t.Fatalf("EachWorker with a panicking job: recovered %v, the other worker finished: %v; want boom, true", got, finished.Load())
	}
}
