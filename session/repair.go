package session

import (
	"context"
	"errors"
	"path/filepath"

	"pkg/install"
	"pkg/notice"
	"pkg/repo"
	"pkg/txn"
)

// Repair rebuilds the root's database, where it is damaged, from the trees in its pkgs/
// and the cache's entries (install.Rebuild, repairCandidates; a sound one is kept,
// install.Rebuilt.Sound), each package described as the indexes of the repositories in
// effect offer it. They are read without the root's records, which may be
// what is damaged; where none can be read, the packages are recorded without their
// commands, libraries and dependencies, and the observer hears so. Where a tree no entry
// of the cache matches (the cache pruned or cleaned since its install), the versions the
// repositories offer of its name are fetched into the cache and the repair tried again,
// unless offline. The observer hears what the repair undid of what commands cut short
// left (install.Rebuilt.Recovered), as it does of an opening of the root.
func (s *Session) Repair(ctx context.Context) (*install.Rebuilt, error) {
	if err := s.RootExists(); err != nil {
		return nil, err
	}
	cache, err := s.openCache(ctx, false)
	if err != nil {
		return nil, err
	}
	var ix *txn.Catalog
	rs, err := s.Repositories()
	if err == nil && len(rs) > 0 {
		ix, err = s.readIndexes(ctx, cache, rs, "")
	}
	why := ""
	if ix == nil {
		why = "no repository is given"
		if err != nil {
			why = err.Error()
		}
	}
	var offered *repo.Index
	if ix != nil {
		offered = ix.Index
	}
	tried := make(map[string]bool) // archives fetched, by sha256
	for {
		candidates, err := repairCandidates(cache, offered)
		if err != nil {
			return nil, err
		}
		out, err := install.Rebuild(ctx, s.Root, s.rootOptions(), candidates)
		var ue *install.UnmatchedError
		if errors.As(err, &ue) && ix != nil && !s.Offline {
			if next := offeredFor(offered, ue.Trees, tried); len(next) > 0 {
				f := s.newFetcher(ix.Source, cache)
				f.Sources = ix.Sources()
				if err := s.obs.During(next, func() error { return f.Fetch(ctx, next, nil) }); err != nil {
					return nil, err
				}
				continue
			}
		}
		if out != nil {
			for _, n := range out.Recovered {
				s.obs.Notice(n)
			}
		}
		if out != nil && len(out.Bare) > 0 { // not those the old database's records describe
			s.obs.Notice(notice.NoIndex{Why: why, Packages: out.Bare})
		}
		return out, err
	}
}

// offeredFor returns the packages of ix for this machine whose tree would be one of trees
// (paths of pkgs/NAME or pkgs/NAME@VERSION) and whose archive is not among tried, which it
// adds them to.
func offeredFor(ix *repo.Index, trees []string, tried map[string]bool) []repo.Package {
	dirs := make(map[string]bool)
	for _, t := range trees {
		dirs[filepath.Base(t)] = true
	}
	var ps []repo.Package
	for _, p := range ix.Packages {
		if dirs[repo.FileName(p.Key())] && !tried[p.SHA256] && (p.Platform == "" || p.Platform == repo.Host) {
			tried[p.SHA256] = true
			ps = append(ps, p)
		}
	}
	return ps
}
