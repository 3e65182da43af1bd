package testfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built is the pkg command, built once for all the tests of a test binary.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// PkgBinary builds the pkg command (pkg/cmd/pkg), once per test binary, and returns its
// path; RemovePkgBinary, from TestMain after m.Run, deletes it.
func PkgBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "pkg-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "pkg")
		if out, err := exec.Command("go", "build", "-o", built.bin, "pkg/cmd/pkg").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// RemovePkgBinary deletes what PkgBinary built, if anything.
func RemovePkgBinary() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
