package crash

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"pkg/db"
	"pkg/internal/testfs"
)

// pids is how pkg names the processes it waits for (procname.Names): each pid with its
// command line, or alone where the process ended before its command line was read.
const pids = `pid \d+( \(.*\))?(, pid \d+( \(.*\))?)*`

// waitingLine is what pkg prints while another process holds the root.
var waitingLine = regexp.MustCompile(`^pkg: note: waiting for (` + pids + `|another pkg process) to finish with /\S+$`)

// fetchWaitLine is what a fetch says while another downloads the same archive.
var fetchWaitLine = regexp.MustCompile(`^pkg: note: \S+ \S+: waiting for (` + pids + `|another pkg), fetching it into the cache$`)

// busyLine is what list prints when it shows the root as it was before a running command.
var busyLine = regexp.MustCompile(`^pkg: note: (pid \d+ \(.*\)|another pkg process) is changing /\S+; this is what was installed before it started$`)

// TestConcurrent runs rounds of 8 pkg processes at once on one root and one cache:
// installs, upgrades, downgrades, removes and fetches of packages that depend on each
// other, starting from an empty cache. Each process succeeds or fails cleanly (only
// "not installed", "depend(s) on it" and "asked for, need(s) it" refusals, with waiting
// messages), and after each
// round: some serial order of the round's commands, replayed on a model of pkg, gives every
// command its observed outcome and ends in the state the root records, what it records
// as asked for included; the root keeps
// every invariant of the commit protocol (checkRoot, including verify); the database
// passes bbolt's check and every cache entry verifies.
func TestConcurrent(t *testing.T) {
	mnt := testfs.Mount(t, "xfs")
	repoDir := t.TempDir()
	w := publish(t, repoDir, libSpec("base", "1.0"), libSpec("extra", "1.0", "base>=1.0"),
		appSpec("a", "1", 300, "base>=1.0"), appSpec("a", "2", 300, "base>=1.0", "extra"),
		appSpec("b", "1", 200, "base"), appSpec("c", "1", 200, "a"), appSpec("d", "1", 400))
	e := &env{t: t, bin: testfs.PkgBinary(t), root: filepath.Join(mnt, "root"), cache: filepath.Join(mnt, "cache"), repo: repoDir}
	e.initRoot() // verify and remove want a root
	commands := [][]string{
		{"install", "a@1"}, {"install", "a@2"}, {"install", "b"}, {"install", "c"}, {"install", "d"},
		{"install", "b", "d"}, {"remove", "a"}, {"remove", "c", "a"}, {"remove", "b"}, {"remove", "d"},
		{"remove", "base"}, {"fetch", "a@2"}, {"fetch", "d"}, {"list"}, {"verify"},
	}
	m := newModel(t, repoDir, w)
	before := state{}
	rng := rand.New(rand.NewPCG(1, 2))
	waits, fetchWaits, busy := 0, 0, 0
	for round := range 4 {
		var wg sync.WaitGroup
		type result struct {
			args           []string
			stderr, stdout string
			code           int
		}
		results := make([]result, 8)
		for i := range results {
			args := commands[rng.IntN(len(commands))]
			if round == 0 && i < 2 {
				args = []string{"fetch", "a@2"} // two fetches of one package into an empty cache
			}
			wg.Go(func() {
				var o, er bytes.Buffer
				c := e.command(append([]string{"--lock-timeout", "2m"}, args...)...)
				c.Stdout, c.Stderr = &o, &er
				c.Run()
				results[i] = result{args, er.String(), o.String(), c.ProcessState.ExitCode()}
			})
		}
		wg.Wait()
		var ran []string
		var cmds [][]string
		var ok []bool
		for _, r := range results {
			ran = append(ran, strings.Join(r.args, " "))
			cmds, ok = append(cmds, r.args), append(ok, r.code == 0)
			var errs []string
			for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				switch {
				case line == "", strings.HasPrefix(line, "pkg: warning: "), strings.HasSuffix(line, `:"$PATH"`): // the PATH note
				case strings.HasPrefix(line, "pkg: hint: "): // its error's, counted below
				case strings.HasPrefix(line, "pkg: note: repository file://") && strings.Contains(line, " is not signed; "): // said until a root records it
				case waitingLine.MatchString(line):
					waits++
				case fetchWaitLine.MatchString(line):
					fetchWaits++
				case r.args[0] == "list" && busyLine.MatchString(line):
					busy++
				default:
					errs = append(errs, line)
				}
			}
			clean := r.code == 0 && len(errs) == 0 || r.code == 1 && len(errs) == 1 &&
				(strings.Contains(errs[0], ": not installed") || strings.Contains(errs[0], " on it (remove ") || strings.Contains(errs[0], ", asked for, "))
			if !clean {
				t.Errorf("round %d: pkg %s: exit %d\nstdout:\n%s\nstderr:\n%s", round, strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
			}
		}
		st, problems := checkRoot(e.root, w)
		problems = append(problems, checkCache(e.cache, w)...)
		for _, p := range problems {
			t.Errorf("after round %d: %s", round, p)
		}
		after := withRequested(t, e.root, st)
		order, end, found := m.serialOrder(before, cmds, ok, after)
		switch {
		case !found:
			t.Errorf("round %d: no serial order of %q from %v gives the outcomes %v and ends at %v", round, ran, before, ok, st)
		case !maps.Equal(end, after):
			t.Errorf("round %d: the root records as asked for %q; the serial order %v of %q leaves %q", round, askedOf(after), order, ran, askedOf(end))
		}
		t.Logf("round %d: %s -> installed %v, asked for %q, as in the serial order %v", round, strings.Join(ran, "; "), st, askedOf(after), order)
		before = after // what the root records, so that a mismatch found stops at its round
	}
	if waits == 0 {
		t.Errorf("no process said it was waiting for another")
	}
	t.Logf("%d waiting messages, %d fetches waiting for another, %d lists of the root before a running command", waits, fetchWaits, busy)
}

// withRequested returns st with the model's mark of each package the root records as asked
// for (a key "+NAME"): what a round's serial order must end at, and the next round starts
// from.
func withRequested(t *testing.T, root string, st state) state {
	d, err := db.Open(filepath.Join(root, ".pkg", "db"), db.Options{Timeout: 10 * time.Second, NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	requested, err := d.Requested()
	if err != nil {
		t.Fatal(err)
	}
	s := maps.Clone(st)
	for k := range requested {
		s["+"+k] = ""
	}
	return s
}
