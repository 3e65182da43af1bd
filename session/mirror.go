package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"pkg/config"
	"pkg/fetch"
	"pkg/repo"
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

// Mirror writes into dir what a by-digest mirror and a mirror of each repository serve,
// for any web server (fetch.Cache.SaveIndex, fetch.Source.SaveArchive): every archive the
// lockfile r.Lock locks, for every platform, as published and verified, at
// dir/sha256/<hex>, and the index of each repository it records, as the repository
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
		rname := mirrorDirName(name, used[name])
		if rname == "sha256" {
			return nil, &MirrorNameError{Name: rname, URL: src.URL()}
		}
		if _, _, err := cache.VerifiedIndex(ctx, src); err != nil {
			return nil, err
		}
		if err := cache.SaveIndex(src, filepath.Join(dir, rname)); err != nil {
			return nil, err
		}
		out.Indexes = append(out.Indexes, rname)
	}
	return out, s.mirrorArchives(ctx, l, srcs, dir, out)
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

// mirrorArchives writes the archives of l, each from the source of its repository in srcs, into dir, s.Jobs at once, counting them in out.
func (s *Session) mirrorArchives(ctx context.Context, l *repo.Lock, srcs map[string]*fetch.Source, dir string, out *Mirrored) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		slots = make(chan struct{}, max(s.Jobs, 1))
		seen  = make(map[string]bool)
	)
	for _, pk := range l.Packages {
		if seen[pk.SHA256] {
			continue
		}
		seen[pk.SHA256] = true
		src := srcs[pk.Repo]
		lr, _ := l.Of(pk.Repo)
		p, err := src.Relocate(pk, lr.URL)
		if err != nil {
			return err
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			wrote, err := src.SaveArchive(ctx, p, dir)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && first == nil:
				first = err
				cancel()
			case wrote:
				out.Wrote++
				out.Bytes += p.Size
			case err == nil:
				out.Kept++
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
