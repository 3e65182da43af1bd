package trust

import (
	"fmt"
	"slices"
	"strings"
)

// PinnedError refuses an index that no key trusted for its repository verified, where pkg
// pinned the repository: a root's record of it (Root set: the root accepted its signed
// index, the keys that verified it then pinned to), or the cache's copy of its index,
// which a trusted key verified (Root ""). That a signature is missing, made by an unknown
// key, or bound to another repository must not pass for a repository nobody signs.
type PinnedError struct {
	Repo    string   // the repository's URL
	Name    string   // the repository's name, as the root recorded it ("" for the cache)
	Version uint64   // of the index pinned
	KeyIDs  []string // the keys it is pinned to: that verified the cache's copy, or that the root recorded
	Root    string   // the root whose record pinned it; "" where the cache's copy did
	// SignedBy are the keys whose signatures the refused index carries, if any (for the
	// cache's pin, which says why it refused the index).
	SignedBy []string
	Err      error // why the index was refused, an *Error (for a root's pin)
}

func (e *PinnedError) Error() string {
	if e.Root == "" {
		why := "it is not signed"
		switch {
		case e.PinnedKeySigned():
			why = "it is signed by key " + strings.Join(e.SignedBy, ", ") + ", which this command does not trust, and so cannot check"
		case len(e.SignedBy) > 0:
			why = "no trusted key signed it: it is signed by key " + strings.Join(e.SignedBy, ", ")
		}
		return fmt.Sprintf("repository %s: index not verified (%s), but the cache's copy of its index (version %d) was verified by key %s",
			e.Repo, why, e.Version, strings.Join(e.KeyIDs, ", "))
	}
	return fmt.Sprintf("%v (root %s pinned repository %s%s when it accepted its index version %d)",
		e.Err, e.Root, e.Name, PinnedTo(e.KeyIDs), e.Version)
}

func (e *PinnedError) Unwrap() error { return e.Err }

// PinnedKeySigned reports whether the refused index carries a signature by a key the
// cache's copy was verified by: not a change of keys, but a command that does not trust
// that key (or an index changed after it was signed, which trusting it would show).
func (e *PinnedError) PinnedKeySigned() bool {
	return slices.ContainsFunc(e.SignedBy, func(k string) bool { return slices.Contains(e.KeyIDs, k) })
}

// PinnedTo says which keys a repository is pinned to: " to key ID", " to keys ID, ID", or
// "" for none.
func PinnedTo(ids []string) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return " to key " + ids[0]
	}
	return " to keys " + strings.Join(ids, ", ")
}
