package realworld

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPython installs python3.11-minimal, libpython3.11-stdlib and python3-minimal,
// published with no flags beside libpython3.11-minimal and their closure: python3.11 finds
// its standard library next to its own executable, in the root, with the host's
// /usr/lib/python3.11 hidden (must-show 2 of #32); and python3, python3-minimal's link to
// python3.11, is a command of the root, found on PATH before the host's.
func TestPython(t *testing.T) {
	w := newWorld(t, "python3.11-minimal", "libpython3.11-stdlib", "python3-minimal")
	w.pkg("install", "python3.11-minimal", "libpython3.11-stdlib", "python3-minimal")
	w.checkInstalled(w.published())
	w.verify()
	w.checkShared("python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib")

	hide := []string{"/usr/lib/python3.11"}
	w.checkHidden(hide, "/usr/bin/python3.11", "-I", "-c", "import encodings")
	const script = "import json, encodings, os, sys\nfor f in (json.__file__, encodings.__file__, os.__file__, sys.prefix): print(f)"
	out := output(t, w.hidden(hide, filepath.Join(w.root, "bin/python3.11"), "-I", "-c", script))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"usr/lib/python3.11/json/__init__.py", "usr/lib/python3.11/encodings/__init__.py", "usr/lib/python3.11/os.py", "usr"}
	if len(lines) != len(want) {
		t.Fatalf("python3.11 printed %q, want %d lines", out, len(want))
	}
	for i, got := range lines {
		if want := filepath.Join(w.root, want[i]); got != want {
			t.Errorf("python3.11: line %d is %q, want %q", i+1, got, want)
		}
	}
	out = output(t, w.hidden(hide, "python3", "-I", "-c", "import json, sys; print(sys.prefix)"))
	if got, want := strings.TrimSpace(out), filepath.Join(w.root, "usr"); got != want {
		t.Errorf("python3 on PATH: sys.prefix %q, want %q (the root's)", got, want)
	}
}
