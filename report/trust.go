package report

import (
	"fmt"
	"slices"

	"pkg/db"
	"pkg/pin"
	"pkg/trust"
)

// TrustedText says that the root at dir trusts k now, and the scope it replaced, if k took
// the place of keys trusted for other repositories (trust.AddTrusted's replaced).
func TrustedText(dir string, k trust.PublicKey, replaced []trust.PublicKey) string {
	was := ""
	if len(replaced) > 0 && !slices.ContainsFunc(replaced, func(r trust.PublicKey) bool { return r.Repo == k.Repo }) {
		was = " (was " + replaced[0].Scope() + ")"
	}
	return fmt.Sprintf("root %s trusts key %s %s%s", dir, k.ID(), k.Scope(), was)
}

// DistrustedText says what pin.Distrust did in the root at dir for the key id: a line for
// each key removed and each repository that stays pinned to other keys; unkeyed are the
// repositories that stay pinned to no key.
func DistrustedText(dir, id string, removed []trust.PublicKey, unpinned []db.Pin) (lines []string, unkeyed []db.Pin) {
	for _, k := range removed {
		lines = append(lines, fmt.Sprintf("root %s no longer trusts key %s %s", dir, id, k.Scope()))
	}
	for _, p := range unpinned {
		if len(p.Keys) == 0 {
			unkeyed = append(unkeyed, p)
			continue
		}
		lines = append(lines, fmt.Sprintf("repository %s (%s) stays pinned%s", p.Location, p.Name, trust.PinnedTo(pin.KeyIDs(p))))
	}
	return lines, unkeyed
}
