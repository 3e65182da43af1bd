package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// moded returns es with the directory name (without its slash) given mode.
func moded(es []entry, name string, mode int64) []entry {
	for i := range es {
		if es[i].name == name+"/" {
			es[i].mode = mode
		}
	}
	return es
}

// modeOf returns the permission bits at path.
func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// TestPrefixDirMode: a directory of the prefix has the mode its first owner's member gives
// it, whatever the umask, with the owner's read, write and search bits (pkg adds and
// removes its entries);
// verify reports a shared directory whose mode was changed, under that owner, and
// installing the owner again puts the mode back, as it does in pkgs/.
func TestPrefixDirMode(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	aTree := func() []entry {
		return moded(moded(tree("usr/bin/a=a", "opt/d/a=a", "srv/a=a"), "opt/d", 0o750), "srv", 0o555)
	}
	a := stageIn(t, r, base, prefixPkg("a", "1"), aTree())
	b := stageIn(t, r, base, prefixPkg("b", "1"), moded(tree("usr/bin/b=b", "opt/d/b=b", "var/g/b=b"), "var/g", 0o775))
	if _, err := r.Apply(context.Background(), []*Staged{a, b}, nil); err != nil {
		t.Fatal(err)
	}
	checkPrefix(t, r)
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{"usr/bin", 0o755}, {"opt/d", 0o750}, {"srv", 0o755}, {"var/g", 0o775}} {
		if got := modeOf(t, r.path(c.path)); got != c.want {
			t.Errorf("%s: mode %#o, want %#o", c.path, got, c.want)
		}
	}

	for _, mode := range []os.FileMode{0o777, 0o700} {
		must(t, os.Chmod(r.path("usr/bin"), mode))
		problems, err := r.Verify()
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 1 || problems[0].Package != "a" || problems[0].Path != r.path("usr/bin") ||
			!errors.Is(problems[0], ErrModified) || !errors.Is(problems[0], ErrPrefix) || !errors.Is(problems[0], ErrMode) {
			t.Fatalf("Verify with usr/bin %#o: %v; want a's usr/bin modified (prefix, mode)", mode, problems)
		}
		applyStaged(t, r, stageIn(t, r, base, prefixPkg("a", "1"), aTree()))
		if got := modeOf(t, r.path("usr/bin")); got != 0o755 {
			t.Errorf("usr/bin after a's reinstall: mode %#o, want 0755", got)
		}
		checkPrefix(t, r)
	}

	// a gone, b is the first owner of opt/d: its mode goes to the prefix.
	must(t, r.uninstall("a"))
	if got := modeOf(t, r.path("opt/d")); got != 0o755 {
		t.Errorf("opt/d after a's removal: mode %#o, want b's 0755", got)
	}
	checkPrefix(t, r)
}
