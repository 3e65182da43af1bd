package session

import (
	"context"

	"pkg/db"
	"pkg/trust"
	"pkg/txn"
)

// Trust adds k to the root's trusted keys (trust.AddTrusted), under the root's lock, and
// returns the root's directory and the keys k replaced. A key bound to a repository by a
// name that is not its own is refused (CheckRepoName).
func (s *Session) Trust(ctx context.Context, k trust.PublicKey) (dir string, replaced []trust.PublicKey, err error) {
	if k.Repo != "" {
		if err := s.CheckRepoName(k.Repo); err != nil {
			return "", nil, err
		}
	}
	root, err := s.OpenRoot(ctx)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	replaced, err = trust.AddTrusted(root.TrustedKeys(), k)
	return root.Dir(), replaced, err
}

// Distrust removes the key of id from the trusted keys of a root where something was
// installed (RootExists), and from the pins of its repositories (txn.Distrust), under the
// root's lock; it returns the root's directory, the keys removed and the repositories
// unpinned.
func (s *Session) Distrust(ctx context.Context, id string) (dir string, removed []trust.PublicKey, unpinned []db.Pin, err error) {
	if err := s.RootExists(); err != nil {
		return "", nil, nil, err
	}
	root, err := s.OpenRoot(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	defer root.Close()
	removed, unpinned, err = txn.Distrust(root, id)
	return root.Dir(), removed, unpinned, err
}
