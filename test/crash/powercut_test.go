package crash

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/internal/testfs"
)

var cuts = flag.Int("cuts", 4, "TestPowerCut: cuts at a random moment of an upgrade, over XFS, ext4 and ext4 with fast commits")

// TestPowerCut upgrades a package on an XFS or ext4 root and cache (ext4 with and without
// fast commits, where an fsync commits the changed inodes and names alone where it can) and
// cuts the power meanwhile: FS_IOC_SHUTDOWN without a log flush, which loses every write
// not yet on the device (dirty pages, journal commits not forced), as xfstests simulates a
// crash. It cuts at the staged tree's last change (the commit's sync comes next), at the
// rename that swaps it in, at random moments, and just after the command returned. A change
// of two packages, whose intents are names of one file (design.md, Commit protocol, 4), is
// cut with the log flushed first, so that what was logged up to the cut is on the device,
// as a journal commit that something else forced (its timer, another process's fsync)
// leaves it: at its first rename into pkgs/, and after its last, held at its next open
// (fanotify), where the remount must find both renames and the intents, and not the
// records. Then it mounts the image again (replaying the journal), runs the next command
// and checks that the root holds the old or the new packages whole, as its database says,
// the new ones if the command had returned, and that the cache holds whole entries (a first
// install fetches and settles them).
//
// This machine's kernel has no device mapper (dm-flakey, dm-log-writes): the shutdown is
// the closest cut it allows. It keeps what the loop device already passed to the image
// file, so it tests the order of write-back and journal commits, not the disk cache
// flushes. btrfs cannot shut down before Linux 6.18's experimental support: it is skipped.
func TestPowerCut(t *testing.T) {
	repoDir := t.TempDir()
	w := publish(t, repoDir, libSpec("lib", "1.0"), appSpec("app", "1", 400, "lib>=1.0"), appSpec("app", "2", 400, "lib>=1.0"),
		appSpec("tool", "1", 100, "lib>=1.0"), appSpec("tool", "2", 100, "lib>=1.0"))
	bin := testfs.PkgBinary(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	kinds := []string{"xfs", "ext4", "ext4fc"}
	for i, fs := range kinds {
		clock := *cuts / len(kinds) // the cuts by the clock, shared out, what is left over on XFS
		if i == 0 {
			clock = *cuts - clock*(len(kinds)-1)
		}
		t.Run(fs, func(t *testing.T) { powerCut(t, fs, w, repoDir, bin, rng, clock) })
	}
}

// armed is what a case of powerCut arms its cut with.
type armed struct {
	wt   *watcher
	root string
	pid  atomic.Int32 // the command's, once started
	cut  func()
}

func powerCut(t *testing.T, fs string, w world, repoDir, bin string, rng *rand.Rand, clock int) {
	var took time.Duration // of an upgrade not cut
	type cut struct {
		name   string
		at     func(a *armed) (stop func(), err error) // arms the cut; nil: after the command returned
		fresh  bool                                    // a first install, fetching into an empty cache (its entries settled by it)
		two    bool                                    // app and tool upgraded in one change: two intents, a file and its link
		logged bool                                    // the journal's buffered commits reach the device before the cut
		kept   bool                                    // the cut comes after the swaps, before the records: the remount finds them and the intents
	}
	onEvent := func(dir string, mask uint32) func(a *armed) (func(), error) {
		return func(a *armed) (func(), error) {
			a.wt.on = func(_ int64, wd int32, m uint32) {
				if wd == a.wt.wd[dir] && m&mask != 0 {
					a.cut()
				}
			}
			return nil, nil
		}
	}
	cases := []cut{
		{name: "after a first install returned", fresh: true},
		{name: "after it returned"},
		{name: "at the staged tree's mode", at: onEvent(".pkg/staging", unix.IN_ATTRIB)},
		{name: "at the swap into pkgs", at: onEvent("pkgs", unix.IN_MOVED_TO)},
		{name: "at the first swap of two into pkgs, the log flushed", at: onEvent("pkgs", unix.IN_MOVED_TO), two: true, logged: true},
		{name: "after the last swap of two into pkgs, at the next open, the log flushed", at: func(a *armed) (func(), error) {
			moved, stopSeen, err := eventsSeen(filepath.Join(a.root, "pkgs"), unix.IN_MOVED_TO, 2)
			if err != nil {
				return nil, err
			}
			g, err := gateOpens(a.root, true, func(pid int32) bool { return pid == a.pid.Load() && moved() }, a.cut)
			if err != nil {
				stopSeen()
				return nil, err
			}
			return func() { g.close(); stopSeen() }, nil
		}, two: true, logged: true, kept: true},
	}
	for range clock {
		cases = append(cases, cut{name: "by the clock", at: func(a *armed) (func(), error) {
			time.AfterFunc(time.Duration(rng.Float64()*1.1*float64(took)), a.cut)
			return nil, nil
		}})
	}
	for _, c := range cases {
		mnt := testfs.Mount(t, fs)
		e := &env{t: t, bin: bin, root: filepath.Join(mnt, "root"), cache: filepath.Join(mnt, "cache"), repo: repoDir}
		e.initRoot()
		before, after, args := state{"app": "1", "lib": "1.0"}, state{"app": "2", "lib": "1.0"}, []string{"install", "app@2"}
		switch {
		case c.fresh:
			before, after, args = state{}, before, []string{"install", "app@1"}
		case c.two:
			before, after = state{"app": "1", "lib": "1.0", "tool": "1"}, state{"app": "2", "lib": "1.0", "tool": "2"}
			args = []string{"install", "app@2", "tool@2"}
			e.ok(args...)
			e.ok("install", "app@1", "tool@1")
		default:
			start := time.Now()
			e.ok("install", "app@2") // its cache entries settled
			took = time.Since(start)
			e.ok("install", "app@1")
		}
		if err := durable.FS(mnt); err != nil {
			t.Fatal(err)
		}
		dir, err := os.Open(mnt) // the cut opens nothing: a gate may hold every open
		if err != nil {
			t.Fatal(err)
		}
		wt, err := watch(e.root)
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		var cutErr error
		a := &armed{wt: wt, root: e.root, cut: func() { once.Do(func() { cutErr = testfs.ShutdownFile(dir, c.logged) }) }}
		stop := func() {}
		if c.at != nil {
			s, err := c.at(a)
			if err != nil {
				t.Fatal(err)
			}
			if s != nil {
				stop = s
			}
		}
		var out bytes.Buffer
		cmd := e.command(args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		go wt.run()
		runErr := cmd.Start()
		if runErr == nil {
			a.pid.Store(int32(cmd.Process.Pid))
			runErr = cmd.Wait()
		}
		stop()
		wt.close()
		var exit *exec.ExitError
		if runErr != nil && !errors.As(runErr, &exit) {
			t.Fatal(runErr)
		}
		returned := false
		once.Do(func() { returned, cutErr = true, testfs.ShutdownFile(dir, c.logged) })
		dir.Close()
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
		if c.kept {
			for _, p := range swapped(e.root, before, after) {
				t.Errorf("cut %s: %s", how, p)
			}
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

// swapped returns what is wrong with root, mounted again after a cut that was to keep the
// swaps of a change from before to after, and not its records: each package it changes is
// in pkgs/ at its new version (its command says so), and the change's intents are names
// of one file.
func swapped(root string, before, after state) []string {
	var problems []string
	for name, v := range after {
		if before[name] == v {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, "pkgs", name, "bin", name))
		if err != nil || !bytes.Contains(b, []byte(name+" "+v+"\n")) {
			problems = append(problems, fmt.Sprintf("the cut kept no swap of %s %s into pkgs: %q, %v", name, v, b, err))
		}
	}
	ents, err := os.ReadDir(filepath.Join(root, ".pkg", "db.intents"))
	inodes := make(map[uint64]int) // inode → its names
	for _, ent := range ents {
		var st unix.Stat_t
		if err = unix.Lstat(filepath.Join(root, ".pkg", "db.intents", ent.Name()), &st); err != nil {
			break
		}
		inodes[st.Ino]++
	}
	if err != nil || len(inodes) != 1 || len(ents) < 2 {
		problems = append(problems, fmt.Sprintf("the cut kept %d intent names of %d files, %v; want the change's, of one file", len(ents), len(inodes), err))
	}
	return problems
}
