package install

import (
	"os"
	"path/filepath"

	"pkg/internal/shell"
)

// BinOffPath returns the root's bin/ if it holds commands and is not on path (a PATH
// value), else "".
func (r *Root) BinOffPath(path string) string {
	bin := filepath.Join(r.dir, "bin")
	if ents, _ := os.ReadDir(bin); len(ents) == 0 || shell.OnPath(bin, path) {
		return ""
	}
	return bin
}
