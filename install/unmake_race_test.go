package install

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// TestAbandonRace: commands opening a root at a path that does not exist, each
// abandoning it, race one another's unmake: none fails to open it, though an unmake
// takes away the .pkg it opened before it could open its lock there.
func TestAbandonRace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "root")
	var wg sync.WaitGroup
	errs := make(chan error, 2400)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 400 {
				r, err := Open(context.Background(), dir, Options{})
				if err != nil {
					errs <- err
					continue
				}
				r.Abandon()
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d opens of %d failed", n, 6*400)
	}
}
