package session

import (
	"context"

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
// commands, libraries and dependencies, and the observer hears so.
func (s *Session) Repair(ctx context.Context) (*install.Rebuilt, error) {
	if err := s.RootExists(); err != nil {
		return nil, err
	}
	cache, err := s.openCache(ctx, false)
	if err != nil {
		return nil, err
	}
	var offered *repo.Index
	rs, err := s.Repositories()
	if err == nil && len(rs) > 0 {
		var ix *txn.Catalog
		if ix, err = s.readIndexes(ctx, cache, rs, ""); err == nil && ix != nil {
			offered = ix.Index
		}
	}
	why := ""
	if offered == nil {
		why = "no repository is given"
		if err != nil {
			why = err.Error()
		}
	}
	candidates, err := repairCandidates(cache, offered)
	if err != nil {
		return nil, err
	}
	out, err := install.Rebuild(ctx, s.Root, s.rootOptions(), candidates)
	if out != nil && len(out.Bare) > 0 { // not those the old database's records describe
		s.obs.Notice(notice.NoIndex{Why: why, Packages: out.Bare})
	}
	return out, err
}
