package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"pkg/config"
	"pkg/fetch"
	"pkg/internal/parallel"
	"pkg/repo"
	"pkg/txn"
)

// Mirrored is what Mirror wrote into a mirror directory.
type Mirrored struct {
	Dir     string
	Indexes []string // the repositories whose index it wrote, each into Dir/<name>/
	Wrote   int      // archives written into Dir/sha256/
	Kept    int      // archives found there already
	Bytes   int64    // of the archives written
}

// MirrorNameError refuses a repository whose name is that of the mirror directory's
// archives, sha256/.
type MirrorNameError struct{ Name, URL string }

func (e *MirrorNameError) Error() string {
	return fmt.Sprintf("mirror: repository %s (%s): its index would go where the archives go, sha256/", e.Name, e.URL)
}

// MirrorOfflineError refuses an offline mirror of archives the mirror directory Dir lacks,
// Packages ("NAME VERSION"): the cache keeps archives converted, not as published.
type MirrorOfflineError struct {
	Dir      string
	Packages []string
}

func (e *MirrorOfflineError) Error() string {
	return fmt.Sprintf("mirror: offline: %s lacks the archives of %s, and the cache keeps archives converted, not as published",
		filepath.Join(e.Dir, "sha256")+"/", strings.Join(e.Packages, ", "))
}

func (e *MirrorOfflineError) Unwrap() error { return ErrOffline }

// Mirror writes into dir what a by-digest mirror and a mirror of each repository serve,
// for any web server (fetch.Cache.SaveIndex, fetch.Source.SaveArchive): every archive the
// lockfile r.Lock locks, for every platform, as published and verified, at
// dir/sha256/<hex>, and then the index of each repository it records, as the repository
// publishes it, signature included, at dir/<name>/, once believed as a command believes it
// (read now, or offline the cache's copy). r.LockPath names the lockfile and, with
// r.LockRepos, its signatures are checked (checkLockSigned) and its repositories are those
// in effect; without, the lock was just made from those in effect (Lock).
func (s *Session) Mirror(ctx context.Context, r Request, dir string) (*Mirrored, error) {
	l := r.Lock
	if r.LockRepos {
		if err := s.checkLockSigned(l, r.LockPath); err != nil {
			return nil, err
		}
		s.useLock(l, r.LockPath)
	}
	srcs, used, err := s.lockSources(l)
	if err != nil {
		return nil, err
	}
	cache, err := s.openCache(ctx, false)
	if err != nil {
		return nil, err
	}
	out := &Mirrored{Dir: dir}
	for name, src := range srcs {
		if rname := mirrorDirName(name, used[name]); rname == "sha256" {
			return nil, &MirrorNameError{Name: rname, URL: src.URL()}
		}
		if _, _, err := cache.VerifiedIndex(ctx, src); err != nil {
			return nil, err
		}
	}
	if err := s.mirrorArchives(ctx, l, srcs, dir, out); err != nil {
		return out, err
	}
	// Each index goes last, as a registry's manifest does: a mirror that fails keeps the
	// index it had, and a client never reads one naming an archive the mirror lacks yet.
	for name, src := range srcs {
		rname := mirrorDirName(name, used[name])
		if err := cache.SaveIndex(src, filepath.Join(dir, rname)); err != nil {
			return out, err
		}
		out.Indexes = append(out.Indexes, rname)
	}
	return out, nil
}

// mirrorDirName is the directory of a lockfile's repository in a mirror: its name, or for a
// lockfile of one, the name of the repository in effect in its place.
func mirrorDirName(name string, r config.Repo) string {
	if name != "" {
		return name
	}
	if r.Name != "" {
		return r.Name
	}
	return config.LocationName(r.URLs[0])
}

// mirrorArchives writes the archives of l, each from the source of its repository in srcs,
// into dir, s.Jobs at once, counting them in out. Offline, it refuses those dir lacks
// together (MirrorOfflineError).
func (s *Session) mirrorArchives(ctx context.Context, l *repo.Lock, srcs map[string]*fetch.Source, dir string, out *Mirrored) error {
	var pkgs []repo.Package
	seen := make(map[string]bool)
	for _, pk := range l.Packages {
		if seen[pk.SHA256] {
			continue
		}
		seen[pk.SHA256] = true
		lr, _ := l.Of(pk.Repo)
		p, err := srcs[pk.Repo].Relocate(pk, lr.URL)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, p)
	}
	var mu sync.Mutex
	var lacking []string
	err := s.obs.During(pkgs, func() error {
		return parallel.Each(ctx, len(pkgs), s.Jobs, func(ctx context.Context, i int) error {
			p := pkgs[i]
			wrote, err := s.saveArchive(ctx, srcs[p.Repo], p, dir)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, fetch.ErrOffline):
				lacking = append(lacking, p.Name+" "+p.Version)
			case err != nil:
				return err
			case wrote:
				out.Wrote++
				out.Bytes += p.Size
			default:
				out.Kept++
			}
			return nil
		})
	})
	if err == nil && lacking != nil {
		slices.Sort(lacking)
		return &MirrorOfflineError{Dir: dir, Packages: lacking}
	}
	return err
}

// saveArchive saves p's archive from src into dir (fetch.Source.SaveArchive), the
// observer hearing of it as of a fetch: one already there as cached.
func (s *Session) saveArchive(ctx context.Context, src *fetch.Source, p repo.Package, dir string) (bool, error) {
	start := time.Now()
	progress := &firstWrite{open: func() io.Writer { return s.obs.Fetching(p) }}
	wrote, err := src.SaveArchive(ctx, p, dir, progress)
	ev := txn.Fetched{Package: p, How: txn.Downloaded, Elapsed: time.Since(start), Err: err}
	if err == nil && !wrote {
		ev.How = txn.Cached
	}
	s.obs.Fetched(ev)
	return wrote, err
}

// firstWrite is the writer open returns, opened at the first write: an archive a mirror
// holds already is not said to download.
type firstWrite struct {
	open func() io.Writer
	w    io.Writer
	done bool
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if !f.done {
		f.w, f.done = f.open(), true
	}
	if f.w == nil {
		return len(p), nil
	}
	return f.w.Write(p)
}
