package session

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/runner"
)

// usedArchives returns the sha256s of the archives installed in the root at dir, if there
// is one, and in the other roots the cache records as installing from it, but those of
// skip (run roots about to go), reading each without its lock. It fails for one it cannot
// read, what that root uses being unknown, before it changes anything; else it forgets the
// roots that are gone, returning them. Once no other process uses the cache
// (fetch.Cache.Exclusive), what every root installed from it is in that root's database.
func usedArchives(cache *fetch.Cache, dir string, o install.Options, skip []string) (inUse map[string]bool, forgot []string, err error) {
	inUse = make(map[string]bool)
	add := func(d *db.DB) error {
		ps, err := d.List()
		for _, p := range ps {
			inUse[p.SHA256] = true
		}
		return err
	}
	own, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := install.View(own, o, nil, add); err != nil && !noRoot(err) {
		return nil, nil, err
	}
	others, err := cache.Roots()
	if err != nil {
		return nil, nil, err
	}
	var gone []string
	for _, other := range others {
		if other == own || slices.Contains(skip, other) {
			continue
		}
		err := install.View(other, o, nil, add)
		switch {
		case errors.Is(err, install.ErrNoRoot):
			gone = append(gone, other)
		case errors.Is(err, install.ErrCutShort): // uses nothing until its next change
		case err != nil:
			return nil, nil, fmt.Errorf("cache prune: root %s also installs from this cache, and what it uses cannot be read, so nothing was removed (if that root is no longer used, remove %s): %w",
				other, cache.RootFile(other), err)
		}
	}
	for _, g := range gone {
		if cache.ForgetRoot(g) == nil {
			forgot = append(forgot, g)
		}
	}
	return inUse, forgot, nil
}

// pruneCache removes from cache, which must be Exclusive, the run roots no command runs from
// that the limits l take (runner.Prune), and then the entries no root that installs from
// it uses that l lets go (trimUnused). It reads every root before it removes anything,
// but the run roots about to go, so that one it cannot read stops it with nothing
// removed. It returns what it removed and the roots it forgot.
func pruneCache(cache *fetch.Cache, dir string, o install.Options, l fetch.Limits) (t Trimmed, forgot []string, err error) {
	var inUse map[string]bool
	ran, err := runner.Prune(cache, l, func(idle []string) (err error) {
		inUse, forgot, err = usedArchives(cache, dir, o, idle)
		return err
	})
	t.RunRoots = len(ran)
	if err != nil {
		return t, forgot, err
	}
	t.Trimmed, err = trimUnused(cache, inUse, l)
	return t, forgot, err
}

// trimUnused removes from cache, which must be Exclusive, the entries inUse does not
// hold that the limits l let go (fetch.Cache.Trim: without limits, all of them).
func trimUnused(cache *fetch.Cache, inUse map[string]bool, l fetch.Limits) (fetch.Trimmed, error) {
	t, err := cache.Trim(l, func(e fetch.Entry) bool { return inUse[e.SHA256] })
	if err == nil {
		cache.MarkPruned() // best effort: autoPruneCache then waits a day
	}
	return t, err
}

// autoEvery is how often autoPruneCache prunes a cache, at most.
const autoEvery = 24 * time.Hour

// autoPruneCache is pruneCache within l for the end of a command that may have grown the
// cache, when l sets a limit: it prunes only if the cache's last prune is autoEvery old and
// no other process uses the cache, and reports whether it did, having recorded it even if
// it failed, so that a failure is said once a day. A cache never pruned starts counting.
// This process must have closed the root at dir. When nothing is due, it costs one fstatat.
func autoPruneCache(cache *fetch.Cache, dir string, o install.Options, l fetch.Limits) (t Trimmed, forgot []string, done bool, err error) {
	if l == (fetch.Limits{}) {
		return t, nil, false, nil
	}
	last, err := cache.LastPruned()
	switch {
	case err != nil:
		return t, nil, false, err
	case last.IsZero():
		return t, nil, false, cache.MarkPruned()
	case time.Since(last) < autoEvery:
		return t, nil, false, nil
	}
	if only, err := cache.TryExclusive(); !only || err != nil {
		return t, nil, false, err
	}
	t, forgot, err = pruneCache(cache, dir, o, l)
	if err != nil {
		cache.MarkPruned()
	}
	return t, forgot, true, err
}
