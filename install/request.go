package install

import (
	"maps"
	"slices"

	"pkg/repo"
)

// Request has the next Apply record, in its commit, that the user asked for the packages
// reqs name, by those requirements, replacing what was recorded: two on one name are
// combined (a repository pin kept), but on an npm name each asks for the instance it
// takes, as two commands would (keyed); names the commit leaves uninstalled are ignored.
// With nothing to change, Apply records only that.
func (r *Root) Request(reqs []repo.Requirement) {
	for _, q := range reqs {
		if r.asked != nil {
			r.asked[q.Name] = true
		}
	}
	r.requests = slices.Clone(reqs)
}

// RequestAt has the next Apply record, in its commit, that the user asked for the
// packages of reqs by key (db.Record.Key), each by its requirement, replacing what was
// recorded: the instances a lockfile resolved its requirements to, whatever other
// instances of their names a requirement allows. Keys the commit leaves uninstalled are
// ignored.
func (r *Root) RequestAt(reqs map[string]repo.Requirement) {
	for k := range reqs {
		if r.asked != nil {
			r.asked[k] = true
		}
	}
	r.requestsAt = maps.Clone(reqs)
}
