package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/fetch"
)

// TestPrune removes the run roots unused since a moment, and only those no command holds,
// forgetting them as roots, once its check lets it (one that fails removes none); a run
// afterwards makes its root again.
func TestPrune(t *testing.T) {
	w := newWorld(t)
	for _, n := range []string{"old", "busy", "recent"} {
		publish(t, w.repo, n, "1")
	}
	runs := map[string]*Run{}
	for _, n := range []string{"old", "busy", "recent"} {
		runs[n] = w.make(w.repo, n)
	}
	long := time.Now().Add(-48 * time.Hour)
	for _, n := range []string{"old", "busy"} {
		if err := os.Chtimes(runs[n].Root+".used", long, long); err != nil {
			t.Fatal(err)
		}
	}
	rd, err := fetch.OpenRunDir(w.cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	busy, err := hold(context.Background(), rd, filepath.Base(runs["busy"].Root)+".used", true) // a command running from it
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(runs["busy"].Root+".used", long, long)
	defer busy.Close()

	cache, err := fetch.OpenCache(context.Background(), w.cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	if n, err := Prune(cache, fetch.Limits{MaxSize: 1}, nil); err != nil || len(n) != 0 {
		t.Fatalf("Prune(max size) = %q, %v; want none removed", n, err)
	}
	day := fetch.Limits{OlderThan: 24 * time.Hour}
	refused := errors.New("refused")
	var idle []string
	n, err := Prune(cache, day, func(paths []string) error { idle = paths; return refused })
	if !errors.Is(err, refused) || len(n) != 0 || !slices.Equal(idle, []string{runs["old"].Root}) {
		t.Fatalf("Prune refused by its check = %q, %v; checked %q; want none removed, old checked", n, err, idle)
	}
	if _, err := os.Stat(runs["old"].Root); err != nil {
		t.Fatalf("old's run root after a refused prune: %v", err)
	}
	n, err = Prune(cache, day, nil)
	if err != nil || !slices.Equal(n, []string{runs["old"].Root}) {
		t.Fatalf("Prune = %q, %v; want old removed", n, err)
	}
	for name, gone := range map[string]bool{"old": true, "busy": false, "recent": false} {
		_, err := os.Stat(runs[name].Root)
		if os.IsNotExist(err) != gone {
			t.Errorf("run root of %s: gone %t, want %t (%v)", name, !gone, gone, err)
		}
	}
	roots, err := cache.Roots()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(roots, runs["old"].Root) || !slices.Contains(roots, runs["recent"].Root) {
		t.Errorf("roots recorded after prune: %q", roots)
	}
	if _, err := os.Stat(runs["old"].Root + ".used"); !os.IsNotExist(err) {
		t.Errorf("old's .used: %v, want it removed", err)
	}
	if got, want := memoRoots(t, w.cacheDir), slices.Sorted(slices.Values([]string{runs["busy"].Root, runs["recent"].Root})); !slices.Equal(got, want) {
		t.Errorf("memos after prune name %q, want %q: old's memo removed with its root", got, want)
	}

	// Without limits, every idle one goes.
	if n, err := Prune(cache, fetch.Limits{}, nil); err != nil || !slices.Equal(n, []string{runs["recent"].Root}) {
		t.Fatalf("Prune(no limits) = %q, %v; want recent removed, busy kept", n, err)
	}
	if _, err := os.Stat(runs["busy"].Root); err != nil {
		t.Errorf("busy run root: %v", err)
	}
	if got, want := memoRoots(t, w.cacheDir), []string{runs["busy"].Root}; !slices.Equal(got, want) {
		t.Errorf("memos after prune name %q, want %q", got, want)
	}

	again := w.make(w.repo, "old")
	if _, err := os.Stat(filepath.Join(again.Root, "bin", "old")); err != nil {
		t.Errorf("a run after the prune: %v", err)
	}
}

// TestPruneFewFiles: with more idle run roots than the process may open files, Prune
// removes those it could hold and leaves the others to the next prune, which removes them.
func TestPruneFewFiles(t *testing.T) {
	w := newWorld(t)
	cache, err := fetch.OpenCache(context.Background(), w.cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	rd, err := cache.RunDir()
	if err != nil {
		t.Fatal(err)
	}
	const runs = 60
	for i := range runs {
		set := fmt.Sprintf("%032x", i)
		if err := os.MkdirAll(filepath.Join(rd.Path, set, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rd.Path, set+".used"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = uint64(len(fds) + runs/3)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	first, err := Prune(cache, fetch.Limits{}, nil)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	if err != nil || len(first) == 0 || len(first) >= runs {
		t.Fatalf("Prune with %d files open at most: removed %d of %d, %v; want some removed", low.Cur, len(first), runs, err)
	}
	rest, err := Prune(cache, fetch.Limits{}, nil)
	if err != nil || len(first)+len(rest) != runs {
		t.Fatalf("Prune again: removed %d more, %v; want the other %d", len(rest), err, runs-len(first))
	}
	if left, _ := os.ReadDir(rd.Path); len(left) != 0 {
		t.Errorf("run directory after both prunes holds %d entries", len(left))
	}
}

// memoRoots returns the run roots the memos of the cache at cacheDir name, sorted.
func memoRoots(t *testing.T, cacheDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(cacheDir, "run", "memo"))
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(cacheDir, "run", "memo", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var m memo
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("memo %s: %v", e.Name(), err)
		}
		roots = append(roots, m.Root)
	}
	slices.Sort(roots)
	return roots
}
