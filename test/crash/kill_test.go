package crash

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/install"
	"pkg/internal/testfs"
)

var (
	iterations = flag.Int("iterations", 0, "TestKill: commands to kill -9 (default 30 under CI=true, else the test is skipped)")
	seed       = flag.Uint64("seed", 0, "TestKill: random seed (default: from the clock)")
	appFiles   = flag.Int("files", 2500, "TestKill: files in each version of the big package")
)

// eventShare is the share of kills timed by the root's inotify events rather than by the
// clock: they land next to the commit protocol's steps (a database write, a rename), which
// a delay spread over the whole command rarely hits. Half of them aim at the intent.
const eventShare = 0.4

// TestKill runs install, upgrade, downgrade, remove and sync as child processes on an XFS root,
// and on a btrfs one, kills each with SIGKILL at a random moment, then runs "pkg verify"
// and checks every invariant of the commit protocol, whose steps differ between the two
// (intents as names unsynced on XFS, synced by their directory on btrfs; the commit's
// syncs). Run it longer with
//
//	go test ./test/crash -run TestKill -v -iterations 300
func TestKill(t *testing.T) {
	n := killIterations(t, 30)
	for _, fs := range []string{"xfs", "btrfs"} {
		t.Run(fs, func(t *testing.T) { killOn(t, fs, n) })
	}
}

// killOn is TestKill on a filesystem of type fs, n commands killed.
func killOn(t *testing.T, fs string, n int) {
	start := time.Now()
	mnt := testfs.Mount(t, fs)
	repoDir := t.TempDir()
	w := publish(t, repoDir, libSpec("lib", "1.0"), appSpec("app", "1", *appFiles, "lib>=1.0"), appSpec("app", "2", *appFiles, "lib>=1.0"))
	e := &env{t: t, bin: testfs.PkgBinary(t), root: filepath.Join(mnt, "root"), cache: filepath.Join(mnt, "cache"), repo: repoDir}
	k, s := newKiller(e, w)
	e.initRoot()
	e.ok("fetch", "app@1")
	e.ok("fetch", "app@2")
	k.locks = [2]op{ // app 1 and lib asked for; app 2 alone, lib its dependency
		k.lock(state{"app": "1", "lib": "1.0"}, "app@1", "lib"),
		k.lock(state{"app": "2", "lib": "1.0"}, "app@2"),
	}
	for _, kind := range []string{"install", "upgrade", "downgrade", "remove", "install", "sync", "sync", "remove", "first"} {
		o := k.opOf(kind)
		if kind == "install" {
			o = op{kind, []string{"install", "app@1"}, state{"app": "1", "lib": "1.0"}, []string{"app"}, nil}
		}
		k.step(o, noKill)
	}
	t.Logf("seed %d; uninterrupted: %v; inotify events: %v", s, k.dur, k.events)
	for range n {
		k.kill(k.next())
	}
	problems := checkCache(e.cache, w)
	k.violations += len(problems)
	for _, p := range problems {
		t.Errorf("cache: %s", p)
	}
	t.Logf("%d iterations, %d killed (%d first changes), %d completed before the kill; kills by phase: %v (syncs: %v); violations: %d; wall time %v",
		n, k.killed, k.firsts, n-k.killed, k.phases, k.syncPhases, k.violations, time.Since(start).Round(time.Second))
	if k.violations > 0 {
		t.Errorf("%d violations", k.violations)
	}
	k.covered(t, n)
}

// covered fails t where n iterations killed no command, or, from minFirsts iterations on,
// no first change: a harness that cut nothing showed nothing.
func (k *killer) covered(t *testing.T, n int) {
	t.Helper()
	if n >= minKilled && k.killed == 0 {
		t.Errorf("%d iterations killed no command", n)
	}
	if n >= minFirsts && k.firsts == 0 {
		t.Errorf("%d iterations killed no first change", n)
	}
}

// minKilled and minFirsts are the iterations from which a run that killed no command, and
// no first change (one op in six of TestKillNPM's, about one in eight to twelve of
// TestKill's), fails: fewer may by chance. CI's default runs are below minFirsts.
const (
	minKilled = 10
	minFirsts = 100
)

// killIterations is the -iterations flag, or ciDefault under CI=true; without either the
// test skips.
func killIterations(t *testing.T, ciDefault int) int {
	t.Helper()
	n := *iterations
	if n == 0 && os.Getenv("CI") == "true" {
		n = ciDefault
	}
	if n == 0 {
		t.Skipf("pass -iterations N to run (CI=true runs %d)", ciDefault)
	}
	return n
}

// newKiller returns a killer seeded by -seed, or by the clock, and the seed to log.
func newKiller(e *env, w world) (*killer, uint64) {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	return &killer{e: e, w: w, rng: rand.New(rand.NewPCG(s, s>>1)), cur: state{}, asked: map[string]bool{},
		dur: map[string]time.Duration{}, events: map[string]int64{}, phases: map[string]int{}, syncPhases: map[string]int{}}, s
}

// kill runs o and kills it at a moment chosen by the share of each way of timing a kill.
func (k *killer) kill(o op) {
	switch f := k.rng.Float64(); {
	case f < eventShare/2:
		k.step(o, byIntent)
	case f < eventShare:
		k.step(o, byEvent)
	default:
		k.step(o, byClock)
	}
}

// killer runs commands against one root and kills them.
type killer struct {
	e          *env
	w          world
	rng        *rand.Rand
	cur        state
	asked      map[string]bool          // the keys the database records as asked for
	locks      [2]op                    // sync from each of two lockfiles (lock)
	dur        map[string]time.Duration // uninterrupted run time by kind of command
	events     map[string]int64         // inotify events of an uninterrupted run, by kind
	phases     map[string]int
	syncPhases map[string]int // of the syncs among phases
	killed     int
	firsts     int // of killed, first changes (op.fresh)
	violations int
	iter       int
}

type op struct {
	kind  string // install, upgrade, downgrade, remove, sync, first (fresh)
	args  []string
	after state // what a run to the end installs
	// What a run to the end records as asked for: the keys ask and those asked for
	// before but unask; a sync's unask is nil, its ask the lockfile's requests alone.
	ask, unask []string
}

// fresh reports whether o is a first change: run on no root, removed first, so that the
// command makes it (killed by the clock).
func (o op) fresh() bool { return o.kind == "first" }

// lock writes a lockfile of the requirements reqs with "pkg lock" and returns the sync
// from it, which installs after and asks for reqs' names alone (the keys of
// after's packages of those names).
func (k *killer) lock(after state, reqs ...string) op {
	file := filepath.Join(k.e.t.TempDir(), "pkg.lock")
	k.e.ok(append([]string{"lock", "-o", file}, reqs...)...)
	o := op{kind: "sync", args: []string{"sync", "-f", file}, after: after}
	for _, q := range reqs {
		name, _, _ := strings.Cut(q, "@")
		for key := range after {
			if key == name || strings.HasPrefix(key, name+"@") {
				o.ask = append(o.ask, key)
			}
		}
	}
	return o
}

// askedAfter returns what o, run to the end, records as asked for, where before was.
func (o op) askedAfter(before map[string]bool) map[string]bool {
	m := map[string]bool{}
	if o.kind != "sync" {
		for key := range before {
			if !slices.Contains(o.unask, key) {
				m[key] = true
			}
		}
	}
	for _, key := range o.ask {
		m[key] = true
	}
	return m
}

type killMode int

const (
	noKill killMode = iota
	byClock
	byEvent
	byIntent
)

// next picks a command that changes what is installed.
func (k *killer) next() op {
	switch app := k.cur["app"]; {
	case app == "" && k.cur["lib"] != "" && k.rng.IntN(3) == 0:
		return op{"remove", []string{"remove", "lib"}, state{}, nil, []string{"lib"}}
	case k.rng.IntN(4) == 0:
		return k.opOf("sync")
	case k.rng.IntN(6) == 0:
		return k.opOf("first")
	case app == "":
		return k.opOf("install")
	case k.rng.IntN(2) == 0:
		return k.opOf("remove")
	case app == "1":
		return k.opOf("upgrade")
	default:
		return k.opOf("downgrade")
	}
}

func (k *killer) opOf(kind string) op {
	app := []string{"app"}
	switch kind {
	case "install":
		v := []string{"1", "2"}[k.rng.IntN(2)]
		return op{kind, []string{"install", "app@" + v}, state{"app": v, "lib": "1.0"}, app, nil}
	case "upgrade":
		return op{kind, []string{"install", "app@2"}, state{"app": "2", "lib": "1.0"}, app, nil}
	case "downgrade":
		return op{kind, []string{"install", "app@1"}, state{"app": "1", "lib": "1.0"}, app, nil}
	case "first": // into a root the command makes: on btrfs, one commit for all of it
		v := []string{"1", "2"}[k.rng.IntN(2)]
		return op{kind: kind, args: []string{"install", "app@" + v}, after: state{"app": v, "lib": "1.0"}, ask: app}
	case "sync": // to the other lockfile's versions: from app 1 and lib asked for, lib a dependency
		if k.cur["app"] == "1" {
			return k.locks[1]
		}
		return k.locks[0]
	}
	// Both orders: pkg removes dependents first whatever the order given.
	if k.rng.IntN(2) == 0 {
		return op{kind, []string{"remove", "lib", "app"}, state{}, nil, []string{"app", "lib"}}
	}
	return op{kind, []string{"remove", "app", "lib"}, state{}, nil, []string{"app", "lib"}}
}

// step runs o, killing it as mode says, then runs "pkg verify" and checks the root.
func (k *killer) step(o op, mode killMode) {
	t := k.e.t
	k.iter++
	if o.fresh() {
		if err := os.RemoveAll(k.e.root); err != nil {
			t.Fatal(err)
		}
		k.cur, k.asked = state{}, map[string]bool{}
		if mode != noKill {
			mode = byClock // no root to watch
		}
	}
	before, askedBefore := maps.Clone(k.cur), maps.Clone(k.asked)
	notes := "" // a file of the user's in the app's directory, which nothing may lose
	if before["app"] != "" {
		notes = filepath.Join(k.e.root, "pkgs", "app", fmt.Sprintf("NOTES-%d", k.iter))
		if err := os.WriteFile(notes, []byte(notes), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wt := &watcher{}
	if !o.fresh() {
		var err error
		if wt, err = watch(k.e.root); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	c := k.e.command(o.args...)
	c.Stdout, c.Stderr = &out, &out
	kill := func() { c.Process.Signal(syscall.SIGKILL) }
	how := "never"
	var timer *time.Timer
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	switch mode {
	case byClock:
		d := time.Duration(k.rng.Float64() * 1.1 * float64(k.dur[o.kind]))
		how = "after " + d.String()
		timer = time.AfterFunc(d, kill)
	case byEvent:
		at := 1 + k.rng.Int64N(max(k.events[o.kind], 1))
		how = fmt.Sprintf("at inotify event %d of %d", at, k.events[o.kind])
		wt.on = func(n int64, _ int32, _ uint32) {
			if n == at {
				kill()
			}
		}
	case byIntent:
		// The intent is the first database write after staging is done (the staged
		// tree gets its mode) or the trash entry is made.
		at, armed, seen := 1+k.rng.IntN(3), false, 0
		how = fmt.Sprintf("at database write %d after staging", at)
		wt.on = func(_ int64, wd int32, mask uint32) {
			switch {
			case wd == wt.wd[".pkg/staging"] && mask&unix.IN_ATTRIB != 0, wd == wt.wd[".pkg/trash"] && mask&unix.IN_CREATE != 0:
				armed = true
			case armed && wd == wt.wd[".pkg/db"]:
				if seen++; seen == at {
					kill()
				}
			}
		}
	}
	if !o.fresh() {
		go wt.run()
	}
	c.Wait()
	elapsed := time.Since(start)
	if timer != nil {
		timer.Stop()
	}
	time.Sleep(10 * time.Millisecond) // let the last events arrive
	var events int64
	if !o.fresh() {
		events = wt.close()
	}
	ws := c.ProcessState.Sys().(syscall.WaitStatus)
	phase := "completed"
	if ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		k.killed++
		if o.fresh() {
			k.firsts++
		}
		phase = k.phase(before, o.after)
	} else if code := c.ProcessState.ExitCode(); code != 0 {
		k.violate(o, how, fmt.Sprintf("exit %d without a kill:\n%s", code, out.String()))
	} else if mode == noKill || how != "never" {
		k.dur[o.kind], k.events[o.kind] = elapsed, events
	}
	if mode != noKill {
		k.phases[phase]++
		if o.kind == "sync" {
			k.syncPhases[phase]++
		}
	}
	if notes != "" {
		if err := k.checkKept(notes); err != nil {
			k.violate(o, how+", phase "+phase, err.Error())
		}
	}
	if o.fresh() && !k.hasDatabase() {
		// Killed before it made the root's database: verify says there is no root, as
		// nothing was ever installed there; made as the next install makes it.
		k.e.initRoot()
	}
	if _, stderr, code := k.e.run("--lock-timeout", "20s", "verify"); code != 0 || strings.Contains(stderr, "waiting") {
		k.violate(o, how, fmt.Sprintf("next command: exit %d: %s", code, stderr))
	}
	got, problems := checkRoot(k.e.root, k.w)
	for name := range mergeKeys(before, o.after, got) {
		if v := got[name]; v != before[name] && v != o.after[name] {
			problems = append(problems, fmt.Sprintf("%s is at %q, neither %q before nor %q after", name, v, before[name], o.after[name]))
		}
	}
	asked := k.requested()
	problems = append(problems, checkAsked(before, o.after, got, askedBefore, o.askedAfter(askedBefore), asked, phase == "completed")...)
	for _, p := range problems {
		k.violate(o, how+", phase "+phase, p)
	}
	k.cur, k.asked = got, asked
}

// checkAsked checks what the database records as asked for, asked, with what is installed,
// got: all of what was asked for before, where the packages are as before, or all of what
// the command asks for, where they are as after it; the command's whole change where it
// completed. The commands of what is asked for, and nothing else, are checked by checkRoot.
func checkAsked(before, after, got state, askedBefore, askedAfter, asked map[string]bool, completed bool) []string {
	wasBefore, isAfter := maps.Equal(asked, askedBefore), maps.Equal(asked, askedAfter)
	switch {
	case completed && (!maps.Equal(got, after) || !isAfter):
		return []string{fmt.Sprintf("completed with %v asked for %v, want %v asked for %v", got, keys(asked), after, keys(askedAfter))}
	case !wasBefore && !isAfter:
		return []string{fmt.Sprintf("asked for: %v, neither %v before nor %v after", keys(asked), keys(askedBefore), keys(askedAfter))}
	case maps.Equal(got, before) && !maps.Equal(got, after) && !wasBefore:
		return []string{fmt.Sprintf("packages as before, %v, asked for as after: %v", got, keys(asked))}
	case maps.Equal(got, after) && !maps.Equal(got, before) && !isAfter:
		return []string{fmt.Sprintf("packages as after, %v, asked for as before: %v", got, keys(asked))}
	}
	return nil
}

func keys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

// requested returns the keys the root's database records as asked for.
func (k *killer) requested() map[string]bool {
	d, err := db.Open(filepath.Join(k.e.root, ".pkg", "db"), db.Options{Timeout: 10 * time.Second})
	if err != nil {
		k.e.t.Fatal(err)
	}
	reqs, err := d.Requested()
	if err != nil {
		k.e.t.Fatal(err)
	}
	m := map[string]bool{}
	for key := range reqs {
		m[key] = true
	}
	return m
}

// checkKept opens the root, as the next command would, and finds the user's file notes:
// in the app's directory still, where it is removed, or kept under .pkg/saved.
func (k *killer) checkKept(notes string) error {
	r, err := install.Open(context.Background(), k.e.root, install.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	r.Close()
	if data, err := os.ReadFile(notes); err == nil && string(data) == notes {
		return os.Remove(notes)
	}
	kept, _ := filepath.Glob(filepath.Join(k.e.root, ".pkg", "saved", "*", filepath.Base(notes)))
	for _, p := range kept {
		if data, err := os.ReadFile(p); err == nil && string(data) == notes {
			return nil
		}
	}
	return fmt.Errorf("the user's %s is lost: not in the app's directory, nor under .pkg/saved", filepath.Base(notes))
}

// hasDatabase reports whether the root holds a database, or the one a first change made
// (.pkg/db.new), which its next command takes or removes.
func (k *killer) hasDatabase() bool {
	for _, name := range []string{"db", "db.new"} {
		if _, err := os.Lstat(filepath.Join(k.e.root, ".pkg", name)); err == nil {
			return true
		}
	}
	return false
}

func (k *killer) violate(o op, how, what string) {
	k.violations++
	if k.violations <= 20 {
		k.e.t.Errorf("iteration %d: pkg %s killed %s: %s", k.iter, strings.Join(o.args, " "), how, what)
	}
}

func mergeKeys(ss ...state) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		for k := range s {
			m[k] = true
		}
	}
	return m
}

// phase tells from what a killed command left behind where it was: "intent" (intent
// recorded, tree not yet renamed), "renamed" (renamed, not yet recorded), "start" (nothing
// changed yet), "stage" (a staging or trash entry and no intent), "finish" (all recorded
// and cleaned up) or "recorded" (some package recorded, the rest or the cleanup pending).
func (k *killer) phase(before, after state) string {
	if _, err := os.Lstat(filepath.Join(k.e.root, ".pkg", "lock")); err != nil {
		return "start" // a root not made yet
	}
	// Read where it is, not created nor adopted: what a first change left is the next
	// command's to find.
	d, err := db.Open(filepath.Join(k.e.root, ".pkg", "db"), db.Options{Timeout: 10 * time.Second, NoCreate: true})
	var ins []db.Intent
	var ps []db.Record
	switch {
	case errors.Is(err, fs.ErrNotExist): // a first change's, before its records
		if names, _ := os.ReadDir(filepath.Join(k.e.root, ".pkg", "db.intents")); len(names) > 0 {
			return "intent"
		}
	case err != nil:
		k.e.t.Fatal(err)
	default:
		var err1, err2 error
		ins, err1 = d.Intents()
		ps, err2 = d.List()
		if err1 != nil || err2 != nil {
			k.e.t.Fatal(err1, err2)
		}
	}
	for _, in := range ins {
		var st unix.Stat_t
		exists := unix.Lstat(filepath.Join(k.e.root, "pkgs", in.Name), &st) == nil
		if in.Op == "install" && exists && st.Ino == in.Inode || in.Op == "remove" && !exists {
			return "renamed"
		}
		return "intent"
	}
	now := state{}
	for _, p := range ps {
		now[p.Key()] = p.Version
	}
	left := false
	for _, dir := range []string{".pkg/staging", ".pkg/trash"} {
		ents, _ := os.ReadDir(filepath.Join(k.e.root, dir))
		left = left || len(ents) > 0
	}
	switch {
	case maps.Equal(now, before) && !left:
		return "start"
	case maps.Equal(now, before):
		return "stage"
	case maps.Equal(now, after) && !left:
		return "finish"
	}
	return "recorded"
}
