package crash

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/internal/testfs"
)

var cuts = flag.Int("cuts", 4, "TestPowerCut: cuts at a random moment of an upgrade")

// TestPowerCut upgrades a package on an XFS root and cache and cuts the power meanwhile:
// FS_IOC_SHUTDOWN without a log flush, which loses every write not yet on the device
// (dirty pages, journal commits not forced), as xfstests simulates a crash. It cuts at the
// staged tree's last change (the commit's sync comes next), at the rename that swaps it
// in, at random moments, and just after the command returned; then it mounts the image
// again (replaying the journal), runs the next command and checks that the root holds the
// old or the new package whole, as its database says, the new one if the command had
// returned, and that the cache holds whole entries (a first install fetches and settles them).
//
// This machine's kernel has no device mapper (dm-flakey, dm-log-writes): the shutdown is
// the closest cut it allows. It keeps what the loop device already passed to the image
// file, so it tests the order of write-back and journal commits, not the disk cache
// flushes. btrfs cannot shut down before Linux 6.18's experimental support: it is skipped.
func TestPowerCut(t *testing.T) {
	repoDir := t.TempDir()
	w := publish(t, repoDir, libSpec("lib", "1.0"), appSpec("app", "1", 400, "lib>=1.0"), appSpec("app", "2", 400, "lib>=1.0"))
	bin := testfs.PkgBinary(t)
	var took time.Duration // of an upgrade not cut
	type cut struct {
		name  string
		at    func(w *watcher, cut func()) // arms the cut; nil: after the command returned
		fresh bool                         // a first install, fetching into an empty cache (its entries settled by it)
	}
	cases := []cut{
		{"after a first install returned", nil, true},
		{"after it returned", nil, false},
		{"at the staged tree's mode", func(wt *watcher, cut func()) {
			wt.on = func(_ int64, wd int32, mask uint32) {
				if wd == wt.wd[".pkg/staging"] && mask&unix.IN_ATTRIB != 0 {
					cut()
				}
			}
		}, false},
		{"at the swap into pkgs", func(wt *watcher, cut func()) {
			wt.on = func(_ int64, wd int32, mask uint32) {
				if wd == wt.wd["pkgs"] && mask&unix.IN_MOVED_TO != 0 {
					cut()
				}
			}
		}, false},
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for range *cuts {
		cases = append(cases, cut{"by the clock", func(_ *watcher, cut func()) {
			time.AfterFunc(time.Duration(rng.Float64()*1.1*float64(took)), cut)
		}, false})
	}
	for _, c := range cases {
		mnt := testfs.Mount(t, "xfs")
		e := &env{t: t, bin: bin, root: filepath.Join(mnt, "root"), cache: filepath.Join(mnt, "cache"), repo: repoDir}
		e.initRoot()
		before, after, args := state{"app": "1", "lib": "1.0"}, state{"app": "2", "lib": "1.0"}, []string{"install", "app@2"}
		if c.fresh {
			before, after, args = state{}, before, []string{"install", "app@1"}
		} else {
			start := time.Now()
			e.ok("install", "app@2") // its cache entries settled
			took = time.Since(start)
			e.ok("install", "app@1")
		}
		if err := durable.FS(mnt); err != nil {
			t.Fatal(err)
		}
		wt, err := watch(e.root)
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		var cutErr error
		cutNow := func() { once.Do(func() { cutErr = testfs.Shutdown(mnt) }) }
		if c.at != nil {
			c.at(wt, cutNow)
		}
		var out bytes.Buffer
		cmd := e.command(args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		go wt.run()
		runErr := cmd.Run()
		wt.close()
		var exit *exec.ExitError
		if runErr != nil && !errors.As(runErr, &exit) {
			t.Fatal(runErr)
		}
		returned := false
		once.Do(func() { returned, cutErr = true, testfs.Shutdown(mnt) })
		if errors.Is(cutErr, unix.ENOTTY) || errors.Is(cutErr, unix.EOPNOTSUPP) {
			testfs.Unavailable(t, cutErr.Error())
		}
		if cutErr != nil {
			t.Fatal(cutErr)
		}
		testfs.Remount(t, mnt)
		how := c.name
		if returned && c.at != nil {
			how += " (too late: after it returned)"
		}
		if returned && runErr != nil {
			t.Fatalf("cut %s: the upgrade failed before the cut: %v\n%s", how, runErr, out.String())
		}
		if _, stderr, code := e.run("--lock-timeout", "20s", "verify"); code != 0 {
			t.Errorf("cut %s: next command: exit %d: %s", how, code, stderr)
		}
		got, problems := checkRoot(e.root, w)
		switch {
		case returned && !maps.Equal(got, after):
			problems = append(problems, fmt.Sprintf("root holds %v, not %v, which the command returned having installed", got, after))
		case !maps.Equal(got, before) && !maps.Equal(got, after):
			problems = append(problems, fmt.Sprintf("root holds %v, neither %v before nor %v after", got, before, after))
		}
		problems = append(problems, checkCache(e.cache, w)...)
		for _, p := range problems {
			t.Errorf("cut %s: %s", how, p)
		}
		t.Logf("cut %s: root holds %v", how, got)
	}
}
