// Package parallel runs a number of jobs a few at a time, stopping at the first error.
package parallel

import (
	"context"
	"errors"
	"sync"
)

// Each calls fn(ctx, i) for each i in [0, n), at most jobs at once (at least one). The
// first error cancels the ctx the others were given, and no job starts after it. Each
// returns the first error that is not the cancellation it caused, else ctx's error, or nil.
func Each(ctx context.Context, n, jobs int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, max(jobs, 1))
	)
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := fn(ctx, i); err != nil {
				mu.Lock()
				if first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled) {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
