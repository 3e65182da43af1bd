package runner

import "pkg/config"

// ReposOf is rs, the repositories in effect, as a Request names them: each at its first
// URL, the one its index is read from.
func ReposOf(rs []config.Repo) []RepoRef {
	out := make([]RepoRef, len(rs))
	for i, r := range rs {
		out[i] = RepoRef{Name: r.Name, Location: r.URLs[0], Keys: r.Keys}
	}
	return out
}
