package session_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pkg/config"
	"pkg/fetch"
	"pkg/internal/testfs"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/runner"
	"pkg/session"
)

// aged returns the options of a session whose root installed libgreet and whose cache
// also holds fortunes and hello, last used 40 and 10 days ago.
func aged(t *testing.T) session.Options {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, n := range []string{"libgreet", "fortunes", "hello"} {
		publish(t, dir, n, "1")
	}
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"), Repos: []config.Repo{{Name: "r", URLs: []string{dir}}}}
	if _, err := installWith(t, o, "libgreet"); err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, o, "")
	if err := s.Fetch(t.Context(), []repo.Requirement{{Name: "fortunes"}, {Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	testrepo.Age(t, o.Cache, map[string]time.Duration{"fortunes": 40 * 24 * time.Hour, "hello": 10 * 24 * time.Hour})
	return o
}

// cached returns the names of the packages the cache of o holds.
func cached(t *testing.T, o session.Options) []string {
	t.Helper()
	s, _ := newSession(t, o, "")
	l, err := s.Upkeep().List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	return names
}

// TestPruneLimits: a prune within the limits given, else the configured ones, removes
// what no root uses and the limits let go: older than the age, or the least recently used
// past the size; a limit given as 0 lifts the configured ones.
func TestPruneLimits(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config string
		given  map[string]string
		left   []string
	}{
		{"older than", "", map[string]string{"older-than": "30d"}, []string{"hello", "libgreet"}},
		{"recent kept", "", map[string]string{"older-than": "1000h"}, []string{"fortunes", "hello", "libgreet"}},
		{"max size", "", map[string]string{"max-size": "1"}, []string{"libgreet"}},
		{"under max size", "", map[string]string{"max-size": "1TiB"}, []string{"fortunes", "hello", "libgreet"}},
		{"configured", "[cache]\nolder-than = \"30d\"\n", nil, []string{"hello", "libgreet"}},
		{"given over configured", "[cache]\nolder-than = \"30d\"\n", map[string]string{"older-than": "5d"}, []string{"libgreet"}},
		{"0 lifts the configured", "[cache]\nolder-than = \"60d\"\nmax-size = \"1TiB\"\n", map[string]string{"older-than": "0"}, []string{"libgreet"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := aged(t)
			s, _ := newSession(t, o, tt.config)
			l, err := s.Upkeep().Limits(tt.given)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := s.Upkeep().Trim(t.Context(), true, l)
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got := cached(t, o); !slices.Equal(got, tt.left) || len(tr.Removed) != 3-len(tt.left) {
				t.Errorf("left %v (removed %d), want %v", got, len(tr.Removed), tt.left)
			}
		})
	}
}

// TestPruneSharedCache prunes a cache two roots install from: what the other root uses is
// kept, until that root is gone, which the prune forgets, saying so.
func TestPruneSharedCache(t *testing.T) {
	o := aged(t)
	b := o
	b.Root = filepath.Join(t.TempDir(), "root-b")
	if _, err := installWith(t, b, "fortunes"); err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, o, "")
	if tr, err := s.Upkeep().Trim(t.Context(), true, fetch.Limits{}); err != nil || len(tr.Removed) != 1 || tr.Removed[0].Name != "hello" {
		t.Errorf("prune while root-b uses fortunes: %+v, %v; want hello alone removed", tr, err)
	}
	s.Close()
	if err := os.RemoveAll(b.Root); err != nil {
		t.Fatal(err)
	}
	s, obs := newSession(t, o, "")
	tr, err := s.Upkeep().Trim(t.Context(), true, fetch.Limits{})
	if err != nil || len(tr.Removed) != 1 || tr.Removed[0].Name != "fortunes" ||
		!slices.Contains(obs.lines, "note: forgot root "+b.Root+", which installed from this cache and is gone") {
		t.Errorf("prune once root-b is gone: %+v, %v, told %q; want fortunes removed, root-b forgotten", tr, err, obs.lines)
	}
}

// idleRun returns the options of an aged cache (aged) and a run root of hello made in it,
// closed: idle, for a prune to remove.
func idleRun(t *testing.T) (session.Options, *runner.Run) {
	t.Helper()
	o := aged(t)
	s, _ := newSession(t, o, "")
	r, err := s.Run(t.Context(), runner.Request{Package: repo.Requirement{Name: "hello"}}, session.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	s.Close()
	return o, r
}

// TestPruneRefused: a prune that meets a recorded root it cannot read removes nothing:
// not the idle run root it would remove first, no entry, not the record of a gone root.
func TestPruneRefused(t *testing.T) {
	o, _ := idleRun(t)
	bad, gone := o, o
	bad.Root, gone.Root = filepath.Join(t.TempDir(), "bad"), filepath.Join(t.TempDir(), "gone")
	for _, b := range []session.Options{bad, gone} {
		if _, err := installWith(t, b, "fortunes"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(gone.Root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad.Root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := testfs.Tree(t, o.Cache)
	s, _ := newSession(t, o, "")
	tr, err := s.Upkeep().Trim(t.Context(), true, fetch.Limits{})
	s.Close()
	var de *session.DamagedError
	if !errors.As(err, &de) || de.Path != filepath.Join(bad.Root, ".pkg", "db") || tr != nil && (tr.RunRoots != 0 || len(tr.Removed) != 0) {
		t.Errorf("prune with a damaged root recorded: %+v, %v; want a DamagedError of %s, nothing removed", tr, err, bad.Root)
	}
	testfs.SameTree(t, "the cache after the prune refused", testfs.Tree(t, o.Cache), before)
}

// TestPruneDamagedRunRoot: a run root about to go is not read, so an idle one whose
// database is damaged goes like any other, and what it used with it.
func TestPruneDamagedRunRoot(t *testing.T) {
	o, r := idleRun(t)
	if err := os.WriteFile(filepath.Join(r.Root, ".pkg", "db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, o, "")
	tr, err := s.Upkeep().Trim(t.Context(), true, fetch.Limits{})
	s.Close()
	if err != nil || tr.RunRoots != 1 || len(tr.Removed) != 2 {
		t.Errorf("prune with an idle damaged run root: %+v, %v; want it removed, and fortunes and hello", tr, err)
	}
	if _, err := os.Stat(r.Root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the damaged run root after the prune: %v", err)
	}
}

// TestTrimWaitsForUsers prunes, and cleans, while another command uses the cache: the
// session says it waits, and removes nothing until that command is done, which here is
// when the session says so.
func TestTrimWaitsForUsers(t *testing.T) {
	for _, tt := range []struct {
		name  string
		prune bool
		l     fetch.Limits
		left  int
	}{{"prune", true, fetch.Limits{MaxSize: 1}, 1}, {"clean", false, fetch.Limits{}, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			o := aged(t)
			other, err := fetch.OpenCache(context.Background(), o.Cache) // as another process would hold it
			if err != nil {
				t.Fatal(err)
			}
			s, obs := newSession(t, o, "")
			want := "note: waiting for the other pkg commands using the cache " + o.Cache
			obs.onAdd = func(line string) {
				if strings.HasPrefix(line, want) {
					if es, err := other.List(); err != nil || len(es) != 3 {
						t.Errorf("entries while the session waits: %v, %v", es, err)
					}
					other.Close()
				}
			}
			_, err = s.Upkeep().Trim(t.Context(), tt.prune, tt.l)
			s.Close()
			if err != nil || !slices.ContainsFunc(obs.lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
				t.Errorf("Trim while another command uses the cache: %v, told %q", err, obs.lines)
			}
			if got := cached(t, o); len(got) != tt.left {
				t.Errorf("left %v, want %d", got, tt.left)
			}
		})
	}
}

// TestAutoPruneOnce: with a configured limit, the first command that finds a prune due (a
// day after the last) prunes the cache, saying so in one note; the first command with a
// limit only starts counting, and the next after a prune finds nothing due, and say
// nothing.
func TestAutoPruneOnce(t *testing.T) {
	o := aged(t)
	const cfg = "[cache]\nolder-than = \"30d\"\n"
	step := func(what string, want []string) {
		t.Helper()
		s, obs := newSession(t, o, cfg)
		if _, err := session.OpenCache(s, t.Context(), false); err != nil {
			t.Fatal(err)
		}
		s.Upkeep().AutoPrune()
		s.Close()
		if len(obs.lines) != len(want) || len(want) == 1 && !strings.HasPrefix(obs.lines[0], want[0]) {
			t.Errorf("%s: told %q, want %q", what, obs.lines, want)
		}
	}
	step("the first command with a limit", nil)
	stamp := filepath.Join(o.Cache, "last-prune")
	was := time.Now().Add(-2 * 24 * time.Hour)
	if err := os.Chtimes(stamp, was, was); err != nil {
		t.Fatalf("the first command with a limit starts counting: %v", err)
	}
	step("once a prune is due", []string{"note: pruned the cache to its configured limits: removed 1 cached package no installed package uses, "})
	if got := cached(t, o); !slices.Equal(got, []string{"hello", "libgreet"}) {
		t.Errorf("after the automatic prune: %v cached, want hello and libgreet", got)
	}
	step("just after a prune", nil)
}

// TestTrimOwnCache trims the cache the same session has open, for a fetch, for itself
// and for a dry run: only other processes' use of the cache holds a trim up.
func TestTrimOwnCache(t *testing.T) {
	o := aged(t)
	s, _ := newSession(t, o, "")
	if err := s.Fetch(t.Context(), []repo.Requirement{{Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{false, true} {
		if _, err := session.OpenCache(s, t.Context(), dry); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	var tr *session.Trimmed
	go func() {
		var err error
		tr, err = s.Upkeep().Trim(t.Context(), true, fetch.Limits{MaxSize: 1})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || len(tr.Removed) != 2 {
			t.Errorf("Trim of the session's own cache: %+v, %v; want fortunes and hello removed", tr, err)
		}
	case <-time.After(10 * time.Second): // a deadlock guard, not a timing assertion
		t.Fatal("Trim hung on the session's own use of the cache")
	}
	s.Close()
	if got := cached(t, o); !slices.Equal(got, []string{"libgreet"}) {
		t.Errorf("left %v, want libgreet", got)
	}
}
