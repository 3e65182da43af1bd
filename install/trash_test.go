package install

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMain lets this test binary serve as the child that empties a root's trash, as pkg's
// main does; only TestRemoveDetached hands it any.
func TestMain(m *testing.M) {
	if RunTrashChild() {
		return
	}
	detachable.Store(false)
	os.Exit(m.Run())
}

// TestRemoveDetached checks that a remove commits, hands the removed tree to a child that
// holds the root's lock until it has deleted it, and that the root is then empty: nothing
// left in the trash, whatever the next command.
func TestRemoveDetached(t *testing.T) {
	detachable.Store(true)
	defer detachable.Store(false)
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	if _, err := r.Install(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove("tool"); err != nil {
		t.Fatal(err)
	}
	if !r.handed {
		t.Fatal("the removed tree was not handed to a child")
	}
	if ps, _ := r.DB().List(); len(ps) != 0 {
		t.Errorf("database lists %+v", ps)
	}
	if _, err := os.Lstat(r.pkgDir("tool")); !os.IsNotExist(err) {
		t.Errorf("pkgs/tool after remove: %v", err)
	}
	r.Close()
	lock, err := os.Open(r.path(".pkg", "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	for start := time.Now(); unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the root's lock is held past 20s")
		}
	}
	unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if ents, _ := os.ReadDir(r.path(".pkg", "trash")); len(ents) != 0 {
		t.Errorf("trash holds %v once the child is done", ents)
	}
	r2 := openRoot(t, r.Dir())
	defer r2.Close()
	if found := r2.Recovered(); found != "" {
		t.Errorf("the next start recovered: %s", found)
	}
	assertEmpty(t, r2)
}
