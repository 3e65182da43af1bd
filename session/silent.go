package session

import (
	"io"
	"time"

	"pkg/notice"
	"pkg/repo"
	"pkg/txn"
)

// silent is the observer of a session given none: it says nothing, and so counts nothing
// as said.
type silent struct{}

var _ txn.Observer = silent{}

func (silent) Fetching(repo.Package) io.Writer                { return nil }
func (silent) Fetched(txn.Fetched)                            {}
func (silent) Waiting(repo.Package, []int, bool)              {}
func (silent) Refetching(repo.Package, error)                 {}
func (silent) During(_ []repo.Package, fn func() error) error { return fn() }
func (silent) Retrying(error, time.Duration, int, int)        {}
func (silent) Notice(notice.Notice)                           {}
func (silent) RootWaiting(string)                             {}
func (silent) RunWaiting(string)                              {}
func (silent) LinksWrong(error)                               {}
func (silent) NotKept(error)                                  {}
func (silent) Unverified(error, bool) bool                    { return false }
