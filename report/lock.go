package report

import (
	"pkg/repo"
	"pkg/txn"
)

// LockText says, a line each, how the lockfile l written at path differs from old (nil:
// none before; txn.LockChanges), then that it was written, or that it was up to date.
func LockText(old, l *repo.Lock, path string) []string {
	lines := txn.LockChanges(old, l)
	if old != nil && len(lines) == 0 && repo.Inputs(old.Requires) == repo.Inputs(l.Requires) {
		return []string{path + " is up to date: " + LockCount(l)}
	}
	return append(lines, "wrote "+path+": "+LockCount(l))
}
