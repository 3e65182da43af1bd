package install

import "pkg/repo"

// Request has the next Apply record, in its commit, that the user asked for the packages
// reqs name, by those requirements (two on one name combined, a repository pin kept),
// replacing what was recorded;
// names the commit leaves uninstalled are ignored. With nothing to change, Apply records
// only that.
func (r *Root) Request(reqs []repo.Requirement) {
	byName := make(map[string]repo.Requirement, len(reqs))
	for _, q := range reqs {
		cur := byName[q.Name]
		cur.Name, cur.Constraints = q.Name, append(cur.Constraints, q.Constraints...)
		if q.Repo != "" { // a pin outlives the command: upgrade keeps to it
			cur.Repo = q.Repo
		}
		byName[q.Name] = cur
		if r.asked != nil {
			r.asked[q.Name] = true
		}
	}
	r.requests = byName
}
