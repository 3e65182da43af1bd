package install

import "pkg/internal/shell"

// BinOffPath returns the root's bin/ if it holds commands and is not on path (a PATH
// value), else "".
func (r *Root) BinOffPath(path string) string {
	dir := r.path("bin")
	if names, _ := r.names(place{in: bin}); len(names) == 0 || shell.OnPath(dir, path) {
		return ""
	}
	return dir
}
