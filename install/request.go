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

// Unrequest has the next Apply record, in its commit, that the packages keys
// (db.Record.Key) are installed as others' dependencies alone, as a lockfile that lists
// them and asks for none of them has them: their requests go, and with an npm instance's
// its link in lib/node_modules and its commands in bin/. A key Request or RequestAt asks
// for stays asked for; one the commit leaves uninstalled is ignored. It also keeps the
// request of an npm instance the commit upgrades from going to the new one (carry).
func (r *Root) Unrequest(keys []string) {
	r.unrequests = slices.Clone(keys)
	if r.asked != nil {
		r.unask(r.asked)
	}
}

// unask takes the keys Unrequest named out of asked, the keys and names asked for
// (askedFor), but those RequestAt asks for.
func (r *Root) unask(asked map[string]bool) {
	for _, k := range r.unrequests {
		if _, ok := r.requestsAt[k]; !ok {
			delete(asked, k)
		}
	}
}
