package session_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pkg/config"
	"pkg/db"
	"pkg/install"
	"pkg/internal/testfs"
	"pkg/notice"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
	"pkg/report"
	"pkg/session"
	"pkg/txn"
)

// publish adds to the repository directory dir a package name at version
// (testrepo.Publish), ending the test if it cannot.
func publish(t testing.TB, dir, name, version string, depends ...string) repo.Package {
	t.Helper()
	p, err := testrepo.Publish(dir, t.TempDir(), name, version, depends...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder is an Observer that keeps what it is told, as lines.
type recorder struct {
	mu    sync.Mutex
	lines []string
	onAdd func(line string) // if not nil, called with each line as it is told
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	line := fmt.Sprintf(format, args...)
	r.lines = append(r.lines, line)
	on := r.onAdd
	r.mu.Unlock()
	if on != nil {
		on(line)
	}
}

func (r *recorder) During(pkgs []repo.Package, fn func() error) error {
	r.add("during %d packages", len(pkgs))
	return fn()
}
func (r *recorder) Fetching(p repo.Package) io.Writer { return nil }
func (r *recorder) Fetched(ev txn.Fetched)            {}
func (r *recorder) Waiting(repo.Package, []int, bool) {}
func (r *recorder) Refetching(p repo.Package, err error) {
	r.add("refetching %s: %v", p.Name, err)
}
func (r *recorder) Retrying(err error, wait time.Duration, attempt, max int) {
	r.add("retrying: %v", err)
}
func (r *recorder) Notice(n notice.Notice) {
	if n.Warning() {
		r.add("warning: %s", report.NoticeText(n))
	} else {
		r.add("note: %s", report.NoticeText(n))
	}
}
func (r *recorder) RootWaiting(holder string) { r.add("waiting for %s", holder) }
func (r *recorder) RunWaiting(holder string)  { r.add("waiting for %s to make the run's root", holder) }
func (r *recorder) LinksWrong(err error)      { r.add("links: %v", err) }
func (r *recorder) NotKept(err error)         { r.add("not kept: %v", err) }
func (r *recorder) Unverified(err error, local bool) bool {
	r.add("unverified (local %v): %v", local, err)
	return true
}

// installed returns a session whose root has name installed from a repository of name
// and tool, and the session's options.
func installed(t *testing.T, name string) (*session.Session, session.Options) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	for _, n := range []string{name, "tool"} {
		publish(t, dir, n, "1")
	}
	o := session.Options{Root: filepath.Join(base, "root"), Cache: filepath.Join(base, "cache"), Repos: []config.Repo{{Name: "r", URLs: []string{dir}}}}
	s, _ := newSession(t, o, "")
	if err := installIn(s, name); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return s, o
}

// installWith installs reqs as pkg install does, in a new session of o, and returns what its
// observer was told.
func installWith(t *testing.T, o session.Options, reqs ...string) (*recorder, error) {
	t.Helper()
	s, obs := newSession(t, o, "")
	defer s.Close()
	return obs, installIn(s, reqs...)
}

func installIn(s *session.Session, reqs ...string) error {
	var rs []repo.Requirement
	for _, r := range reqs {
		req, err := repo.ParseRequirement(r)
		if err != nil {
			return err
		}
		rs = append(rs, req)
	}
	p, err := s.Plan(context.Background(), session.Request{Op: session.Install, Requires: rs})
	if err != nil {
		return err
	}
	_, err = p.Apply(context.Background())
	return err
}

// state describes the root at dir, its database and the cache, for before-and-after
// checks: the root's tree but for its database and lock, and what the database records
// (intents, packages with their files, repositories accepted), "" where there is no root.
type state struct {
	root, cache map[string]string
	db          string
}

func stateOf(t *testing.T, o session.Options) state {
	t.Helper()
	st := state{cache: testfs.Tree(t, o.Cache)}
	if _, err := os.Lstat(o.Root); err == nil { // a failed first change leaves none
		st.root = testfs.Tree(t, o.Root, ".pkg/db", ".pkg/db.sum", ".pkg/lock")
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	err := install.View(o.Root, install.Options{}, nil, func(d *db.DB) error {
		ins, err := d.Intents()
		if err != nil {
			return err
		}
		st.db = fmt.Sprintf("intents %v;", ins)
		ps, err := d.List()
		for _, p := range ps {
			files, err := d.Files(p.Name)
			if err != nil {
				return err
			}
			st.db += fmt.Sprintf(" %s %s %v %x;", p.Name, p.Version, p.Bin, files)
		}
		if err != nil {
			return err
		}
		rs, err := d.Repos()
		for _, r := range rs {
			st.db += fmt.Sprintf(" repository %+v;", r)
		}
		return err
	})
	if err != nil && !errors.Is(err, install.ErrNoRoot) {
		t.Fatal(err)
	}
	return st
}

// same reports, as errors of t, how now differs from was.
func (was state) same(t *testing.T, now state) {
	t.Helper()
	testfs.SameTree(t, "root", now.root, was.root)
	testfs.SameTree(t, "cache", now.cache, was.cache)
	if now.db != was.db {
		t.Errorf("database changed:\n%s\nwas\n%s", now.db, was.db)
	}
}
