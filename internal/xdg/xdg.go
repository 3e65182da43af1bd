// Package xdg places pkg's directories by the XDG base directory variables.
package xdg

import (
	"os"
	"path/filepath"
)

// Dir returns $env/pkg, else ~/fallback/pkg, else "" where there is no home. A relative
// $env is ignored, as the XDG Base Directory spec says. No temporary directory stands in
// for the home: one another user made first would hold what is put there.
func Dir(env, fallback string) string {
	if d := os.Getenv(env); filepath.IsAbs(d) {
		return filepath.Join(d, "pkg")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, fallback, "pkg")
}
