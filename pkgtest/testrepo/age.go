package testrepo

import (
	"os"
	"testing"
	"time"

	"pkg/fetch"
)

// Age makes the entries of the cache at dir of the packages named in ages last used that
// long ago.
func Age(t testing.TB, dir string, ages map[string]time.Duration) {
	t.Helper()
	cache, err := fetch.OpenCache(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	es, err := cache.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if ago, ok := ages[e.Name]; ok {
			was := time.Now().Add(-ago)
			if err := os.Chtimes(cache.Path(e.SHA256), was, was); err != nil {
				t.Fatal(err)
			}
		}
	}
}
