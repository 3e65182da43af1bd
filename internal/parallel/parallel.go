// Package parallel runs a number of jobs a few at a time, stopping at the first error.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Each calls fn(ctx, i) for each i in [0, n), starting them in order, at most jobs at once
// (at least one). The first error cancels the ctx the others were given, and no job starts
// after it. Each returns that error, else ctx's error, or nil.
func Each(ctx context.Context, n, jobs int, fn func(ctx context.Context, i int) error) error {
	return EachWorker(ctx, n, jobs, func(ctx context.Context, _, i int) error { return fn(ctx, i) })
}

// EachWorker is Each, telling fn which worker runs job i: what a worker reuses from job to
// job can be kept by that number. The workers are numbered from 0 to min(max(jobs, 1), n)-1
// (none for n <= 0). Each is a goroutine that takes the next i until none is left, the
// last one the caller's: a goroutine's stack, once grown by its first job, serves the jobs
// after it. A job's panic on the caller's goroutine cancels ctx and waits for the other
// workers to return before it goes on up; one on another worker's ends the program, as
// any goroutine's does.
func EachWorker(ctx context.Context, n, jobs int, fn func(ctx context.Context, worker, i int) error) error {
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  atomic.Int64 // the next i a worker takes
	)
	work := func(worker int) {
		for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
			if err := fn(ctx, worker, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}
	}
	defer func() { cancel(); wg.Wait() }() // a panic's way too
	workers := min(max(jobs, 1), n)
	for w := range workers - 1 {
		wg.Go(func() { work(w) })
	}
	if workers > 0 {
		work(workers - 1)
	}
	wg.Wait()
	if first == nil {
		first = outer.Err()
	}
	return first
}
