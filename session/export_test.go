package session

import (
	"context"

	"pkg/txn"
)

// What the session's calls use inside, for the tests of package session_test.
var (
	OpenCache       = (*Session).openCache
	ReadOnlyRoot    = (*Session).readOnlyRoot
	TrustPolicy     = (*Session).trustPolicy
	HasRepos        = (*Session).hasRepos
	SourceOf        = (*Session).source
	SourceOptions   = (*Session).sourceOptions
	CheckLockSigned = (*Session).checkLockSigned
	PeekRoot        = (*Session).peekRoot

	UsedArchives   = usedArchives
	PruneCache     = pruneCache
	AutoPruneCache = autoPruneCache
	AutoEvery      = autoEvery
	OfferedPackage = offeredPackage
	Stale          = stale
)

// OpenFetcher is openFetcher of no change.
func OpenFetcher(s *Session, ctx context.Context, dry bool) (*txn.Fetcher, *txn.Catalog, error) {
	return s.openFetcher(ctx, dry, nil)
}
