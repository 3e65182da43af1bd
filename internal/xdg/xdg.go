// Package xdg places pkg's directories by the XDG base directory variables.
package xdg

import (
	"os"
	"path/filepath"
)

// Dir returns $env/pkg, else ~/fallback/pkg, else pkg in the temporary directory where
// there is no home.
func Dir(env, fallback string) string {
	if d := os.Getenv(env); d != "" {
		return filepath.Join(d, "pkg")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "pkg")
	}
	return filepath.Join(home, fallback, "pkg")
}
