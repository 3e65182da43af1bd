package session

import (
	"context"

	"pkg/txn"
)

// What the tests of package session_test call that commands do not.
var (
	HasRepos        = (*Session).hasRepos
	SourceOf        = (*Session).source
	SourceOptions   = (*Session).sourceOptions
	CheckLockSigned = (*Session).checkLockSigned
	PeekRoot        = (*Session).peekRoot
)

// OpenFetcher is openFetcher of no change.
func OpenFetcher(s *Session, ctx context.Context, dry bool) (*txn.Fetcher, *txn.Catalog, error) {
	return s.openFetcher(ctx, dry, false)
}
