package session

import (
	"context"

	"pkg/db"
	"pkg/pin"
	"pkg/trust"
)

// Trust adds k to the root's trusted keys (trust.AddTrusted), under the root's lock, and
// returns the root's directory and the keys k replaced. A key bound to a repository by a
// name that is not its own is refused (checkRepoName).
func (s *Session) Trust(ctx context.Context, k trust.PublicKey) (dir string, replaced []trust.PublicKey, err error) {
	if k.Repo != "" {
		if err := s.checkRepoName(k.Repo); err != nil {
			return "", nil, err
		}
	}
	root, err := s.openRoot(ctx)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	replaced, err = trust.AddTrusted(root.TrustedKeys(), k)
	return root.Dir(), replaced, err
}

// Distrusted is what Distrust did.
type Distrusted struct {
	Dir      string // the root
	Removed  []trust.PublicKey
	Unpinned []db.Pin
	// TrustedBy names the keys given to the command (Options.Keys) that trust the key
	// still: pkg changes none of them.
	TrustedBy []string
}

// Distrust removes the key of id from the trusted keys of a root where something was
// installed (RootExists), and from the pins of its repositories (pin.Distrust), under the
// root's lock.
func (s *Session) Distrust(ctx context.Context, id string) (*Distrusted, error) {
	if err := s.RootExists(); err != nil {
		return nil, err
	}
	root, err := s.openRoot(ctx)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	d := &Distrusted{Dir: root.Dir()}
	if d.Removed, d.Unpinned, err = pin.Distrust(root.TrustedKeys(), root.DB(), id); err != nil {
		return d, err
	}
	if sources, err := s.keySources(); err == nil {
		d.TrustedBy = trust.Trusting(sources[:len(s.Keys)], id)
	}
	return d, nil
}

// Trusted returns the trusted keys of each source, those given to the command first, then
// the root's, and the repositories the root pinned, read without the root's lock (none
// where there is no root).
func (s *Session) Trusted() (sources []trust.KeySource, pins []db.Pin, err error) {
	if sources, err = s.keySources(); err != nil {
		return nil, nil, err
	}
	err = s.peekRoot(func(d *db.DB) (err error) { pins, err = d.Repos(); return err })
	return sources, pins, err
}
