package report

import (
	"fmt"

	"pkg/trust"
)

// ReposText says, a few lines each, the repositories in effect as pkg repo list prints
// them: name, priority and where it was given, its URLs, and its keys with their ids.
func ReposText(repos []Repository) []string {
	var lines []string
	for _, r := range repos {
		if r.From == "--repo" || r.From == "PKG_REPO" {
			lines = append(lines, fmt.Sprintf("%s (from %s)", r.Name, r.From))
		} else {
			lines = append(lines, fmt.Sprintf("%s (priority %d, from %s)", r.Name, r.Priority, r.From))
		}
		for i, u := range r.URLs {
			lines = append(lines, fmt.Sprintf("  %s %s", map[bool]string{true: "url   ", false: "mirror"}[i == 0], u))
		}
		for j, s := range r.Keys {
			id := "?"
			if k, err := trust.ParsePublicKey(s); err == nil {
				id = k.ID()
			}
			line := fmt.Sprintf("  key    %s %s", id, s)
			if j < len(r.KeysFrom) && r.KeysFrom[j] != r.From {
				line += " (from " + r.KeysFrom[j] + ")"
			}
			lines = append(lines, line)
		}
	}
	return lines
}
