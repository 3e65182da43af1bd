package install

import "pkg/repo"

// Request records that the user asked for the installed packages reqs name, by those
// requirements (several on one name combine), replacing what was recorded for them.
func (r *Root) Request(reqs []repo.Requirement) error {
	byName := make(map[string]repo.Requirement, len(reqs))
	for _, q := range reqs {
		cur := byName[q.Name]
		cur.Name, cur.Constraints = q.Name, append(cur.Constraints, q.Constraints...)
		byName[q.Name] = cur
	}
	m := make(map[string]string, len(byName))
	for name, q := range byName {
		m[name] = q.String()
	}
	return r.db.Request(m)
}
