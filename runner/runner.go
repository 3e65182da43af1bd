// Package runner runs a package's command without installing it into the user's root:
// from a root of its own under the cache, <cache>/run/<set>, made by the same plan and
// commit as any install (so it is whole or absent) and named by the set of packages a
// request resolves to, on this platform. A request that resolves to the same set again
// reuses it. A memo per request (memo.go) lets a run repeated while the repository's
// index has not changed skip the index, the resolution and the root's database.
//
// Layout, under <cache>/run:
//
//	<set>/            a run root (install.Root), recorded with the cache like any root
//	<set>.used        flocked shared by every run of it, for as long as its command runs
//	                  (the lock passes to the command), and touched by each: its mtime
//	                  is the root's last use
//	memo/<req>.json   what a request last resolved to (memo.go)
//
// It prints nothing, and never opens the user's root but to read its records.
package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/dirfd"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// Request is a command to run: the package's, from a root holding it and With.
type Request struct {
	Repos   []RepoRef // the repositories, in the order names resolve from them
	Package repo.Requirement
	With    []repo.Requirement
	Command string // the command's name in bin/; "" picks the package's (Pick)
	// What else the index is believed under: the keys trusted and whether a signature is
	// required, and the user's root, whose records pin repositories. A request that
	// differs in any of them is another request.
	Trust trust.Policy
	Root  string
	// Lock, if not "", is a lockfile whose packages for this platform the run takes, at the
	// versions and sha256s it records, in place of the index's resolution.
	Lock string
}

// RepoRef is a repository a request resolves from.
type RepoRef struct {
	Name, Location string
	Keys           []string // trusted for it alone
}

func (r Request) requirements() []repo.Requirement {
	return append([]repo.Requirement{r.Package}, r.With...)
}

// Run is a command ready to run from a run root.
type Run struct {
	Root    string       // the run root's path in the cache
	Command string       // its name in Root/bin
	Package repo.Package // the package run: only its name and version when reused
	// Outcome is what making the root did: nil when the root held the set already.
	Outcome *txn.Outcome
	// NoMemo says why the memo of the request could not be written: the next run
	// resolves it again.
	NoMemo error

	used *os.File // <set>.used, flocked shared
	exe  *os.File // the command, opened beneath the run root (openCommand)
	link string   // what bin/<Command> held when exe was opened: a symlink's target, or ""
}

// path is the command's path in the run root.
func (r *Run) path() string { return filepath.Join(r.Root, "bin", r.Command) }

// Close releases the run root, for a caller that does not Exec.
func (r *Run) Close() error {
	if r.exe != nil {
		r.exe.Close()
	}
	return r.used.Close()
}

// open opens r's command in the run root set of runs, beneath the root's directory.
func (r *Run) open(runs *os.File, set string) error {
	root, err := dirfd.Open(runs, set, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer root.Close()
	if r.exe != nil {
		r.exe.Close()
	}
	r.exe, r.link, err = openCommand(root, r.Command)
	return err
}

// Make resolves req against ix, or takes its lockfile's packages (ix nil: none is read),
// into a set of packages, picks the command, and returns it ready to run from the set's
// run root, making that root (through f, under the root's lock, with the options o) where
// it does not hold the set yet. w is what Watch saw before ix was read: the memo it
// writes is good while that holds. A request refused before anything is fetched (a
// package or a command that is not there) makes nothing; a root whose making fails is
// left with no database, as a first install leaves one.
func Make(ctx context.Context, f *txn.Fetcher, ix *txn.Catalog, req Request, w Watched, o install.Options) (*Run, error) {
	reqs := req.requirements()
	pkgs, lock, err := resolve(ix, req.Lock, reqs)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(pkgs, func(p repo.Package) bool { return p.Name == req.Package.Name })
	if i < 0 { // the resolver returns every package asked for
		return nil, fmt.Errorf("run %s: not among the packages resolved", req.Package)
	}
	main := pkgs[i]
	cmd, err := Pick(main, pkgs, req.Command)
	if err != nil {
		return nil, err
	}
	runs, err := f.Cache.RunDir()
	if err != nil {
		return nil, err
	}
	set := setKey(pkgs, repo.Host)
	used, err := hold(ctx, runs.Dir, set+".used", true)
	if err == nil {
		afterHold(runs.Dir, set+".used")
		err = runs.GiveFile(used) // the file held, whatever its name holds now
	}
	if err != nil {
		if used != nil {
			used.Close()
		}
		return nil, err
	}
	r := &Run{Root: filepath.Join(runs.Dir.Name(), set), Command: cmd, Package: main, used: used}
	err = r.make(ctx, f, runs, set, ix, lock, pkgs, reqs, o)
	if gerr := runs.Give(set); err == nil { // made or not, what root made is the cache owner's
		err = gerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	r.NoMemo = w.remember(runs.Dir, req, r, expires(ix))
	if err := runs.Give("memo"); err != nil && r.NoMemo == nil {
		r.NoMemo = err
	}
	return r, nil
}

// make makes the run root set of runs hold pkgs, resolved from reqs (and lock, if not
// nil), and opens r's command in it.
func (r *Run) make(ctx context.Context, f *txn.Fetcher, runs *fetch.Runs, set string, ix *txn.Catalog, lock *repo.Lock, pkgs []repo.Package, reqs []repo.Requirement, o install.Options) error {
	// The root is made through the cache's descriptor of run/; it is known by its path.
	dir := runs.Path + "/" + set
	o.Name = r.Root
	var err error
	if r.Outcome, err = makeRoot(ctx, f, dir, planner(dir, ix, lock, reqs, f), reqs, o); err != nil {
		return err
	}
	if err := r.open(runs.Dir, set); err != nil {
		// The root holds the set but not the command's link or file, deleted from it:
		// the package that has the command is put back.
		if r.Outcome, err = makeRoot(ctx, f, dir, repair(dir, ix, lock, pkgs, r.Command, f), reqs, o); err == nil {
			err = r.open(runs.Dir, set)
		}
		if err != nil {
			return fmt.Errorf("run %s %s: command %s: %w", r.Package.Name, r.Package.Version, r.Command, err)
		}
	}
	return nil
}

// resolve returns the packages of reqs, from the lockfile at lockPath (then also returned)
// or else resolved against ix.
func resolve(ix *txn.Catalog, lockPath string, reqs []repo.Requirement) ([]repo.Package, *repo.Lock, error) {
	if lockPath == "" {
		pkgs, err := ix.Resolve(reqs)
		return pkgs, nil, err
	}
	lock, err := fromLock(lockPath, reqs)
	if err != nil {
		return nil, nil, err
	}
	pkgs, err := lock.Order()
	return pkgs, lock, err
}

// planner returns the plan of the run root at dir: reqs installed from ix, or, with a
// lock, the root synced to it, each archive fetched through f's source of its repository.
func planner(dir string, ix *txn.Catalog, lock *repo.Lock, reqs []repo.Requirement, f *txn.Fetcher) func(*install.Root, []db.Record) (*txn.Plan, error) {
	if lock == nil {
		return func(_ *install.Root, recs []db.Record) (*txn.Plan, error) {
			return txn.NewPlan(txn.Spec{Action: txn.Install, Requires: reqs, Root: dir, Records: recs, Catalog: ix, Cache: f.Cache})
		}
	}
	return func(root *install.Root, _ []db.Record) (*txn.Plan, error) {
		// A run root holds its set alone, and is shared by every request of the set: what
		// one asked for stays so.
		p, _, err := txn.SyncPlan(root, lock, true, f.Cache)
		if err == nil {
			err = p.Relocate(lock, f.Sources, f.Cache)
		}
		return p, err
	}
}

// repair returns the plan of installing again, into the run root at dir, the package of
// pkgs that has the command cmd: from ix, or, with a lock, as it locks it.
func repair(dir string, ix *txn.Catalog, lock *repo.Lock, pkgs []repo.Package, cmd string, f *txn.Fetcher) func(*install.Root, []db.Record) (*txn.Plan, error) {
	return func(_ *install.Root, recs []db.Record) (*txn.Plan, error) {
		i := slices.IndexFunc(pkgs, func(p repo.Package) bool { return slices.Contains(commands(p), cmd) })
		if i < 0 {
			return nil, fmt.Errorf("run: no package of the run has the command %s", cmd)
		}
		if lock != nil {
			ix = &txn.Catalog{Index: &repo.Index{Format: 1, Packages: lock.Packages}}
		}
		p, err := txn.NewPlan(txn.Spec{Action: txn.Reinstall, Names: []string{pkgs[i].Key()}, Root: dir, Records: recs, Catalog: ix, Cache: f.Cache})
		if err == nil && lock != nil {
			err = p.Relocate(lock, f.Sources, f.Cache)
		}
		return p, err
	}
}

// expires returns the earliest expiry of ix's signed indexes, zero if none expires or ix
// is nil.
func expires(ix *txn.Catalog) time.Time {
	var first time.Time
	if ix == nil {
		return first
	}
	for _, r := range ix.Repos() {
		if e := r.Trust.Expires; !e.IsZero() && (first.IsZero() || e.Before(first)) {
			first = e
		}
	}
	return first
}

// fromLock returns the lock of what reqs need of the lockfile at path on this platform:
// each package asked for, at the version and sha256 it locks, and those it depends on.
// A package asked for that it does not lock, or not as asked, is refused naming it.
func fromLock(path string, reqs []repo.Requirement) (*repo.Lock, error) {
	l, err := repo.ReadLock(path)
	if err != nil {
		return nil, err
	}
	all, err := l.Order()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := make([]repo.Requirement, len(reqs))
	for i, q := range reqs {
		j := slices.IndexFunc(all, func(p repo.Package) bool { return p.Name == q.Name })
		switch {
		case j < 0:
			return nil, fmt.Errorf("run %s: %s does not lock %s for %s", q, path, q.Name, repo.Host)
		case !q.AllowsOf(all[j].Kind, all[j].Version):
			return nil, fmt.Errorf("run %s: %s locks %s %s", q, path, q.Name, all[j].Version)
		case q.Repo != "" && all[j].Repo != q.Repo:
			return nil, fmt.Errorf("run %s: %s locks %s from repository %s", q, path, q.Name, cmp.Or(all[j].Repo, l.Repo))
		}
		want[i] = repo.Requirement{Name: q.Name}
	}
	pkgs, err := (&repo.Index{Format: 1, Packages: all}).Resolve(want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &repo.Lock{Repo: l.Repo, Index: l.Index, Repos: l.Repos, Requires: want, Packages: pkgs}, nil
}

// makeRoot makes the run root at dir hold what plan, given the root and its records,
// installs, recording reqs as asked for (an npm package's commands are linked only so),
// and returns what that did, nil if nothing.
func makeRoot(ctx context.Context, f *txn.Fetcher, dir string, makePlan func(*install.Root, []db.Record) (*txn.Plan, error), reqs []repo.Requirement, o install.Options) (*txn.Outcome, error) {
	root, err := install.Open(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	recs, err := root.DB().List()
	if err != nil {
		root.Close()
		return nil, err
	}
	plan, err := makePlan(root, recs)
	if err != nil {
		root.Abandon()
		return nil, err
	}
	plan.Bind(txn.Target{Root: root, Fetcher: f, Requests: reqs})
	if len(plan.Changes) == 0 {
		f.Cache.AddRoot(dir) // recorded by the commit that made it; this keeps it so
		return nil, plan.Close()
	}
	return plan.Apply(ctx)
}

// setKey names the run root of the packages pkgs on platform: a digest of each package's
// name, version, archive, dependencies, commands and libraries, whatever their order.
func setKey(pkgs []repo.Package, platform string) string {
	lines := make([]string, len(pkgs))
	for i, p := range pkgs {
		lines[i] = fmt.Sprintf("%q %q %s %q %q %q", p.Name, p.Version, p.SHA256, p.Depends, p.Bin, p.Lib)
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte("pkg run set 1\n" + platform + "\n" + strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:16])
}

// CommandError is a command that cannot be run: the package has none, or several and
// none named like it, or none named as asked, among its own and the others of the run.
type CommandError struct {
	Package, Version string
	Asked            string   // the command asked for, or ""
	Commands         []string // the package's commands
	Others           []string // the commands of the other packages of the run
}

func (e *CommandError) Error() string {
	what := "run " + e.Package + " " + e.Version
	switch {
	case e.Asked != "" && len(e.Commands)+len(e.Others) == 0:
		return fmt.Sprintf("%s: no command %q: it has no commands", what, e.Asked)
	case e.Asked != "":
		return fmt.Sprintf("%s: no command %q: it has %s", what, e.Asked, strings.Join(append(slices.Clip(e.Commands), e.Others...), ", "))
	case len(e.Commands) == 0 && len(e.Others) > 0:
		return fmt.Sprintf("%s: the package has no commands; the run's other packages have %s", what, strings.Join(e.Others, ", "))
	case len(e.Commands) == 0:
		return what + ": the package has no commands"
	}
	return fmt.Sprintf("%s: the package has several commands, none named %s: %s", what, e.Package, strings.Join(e.Commands, ", "))
}

// Pick returns the command of p to run: the one asked for, which may also be one of
// another package of the run, all; else p's only command, or the one named like p.
func Pick(p repo.Package, all []repo.Package, asked string) (string, error) {
	own := commands(p)
	if asked == "" && len(own) == 1 {
		return own[0], nil
	}
	if slices.Contains(own, asked) || asked == "" && slices.Contains(own, p.Name) {
		return cmp.Or(asked, p.Name), nil
	}
	var others []string
	for _, q := range all {
		if q.Name != p.Name {
			others = append(others, commands(q)...)
		}
	}
	if asked != "" && slices.Contains(others, asked) {
		return asked, nil
	}
	return "", &CommandError{Package: p.Name, Version: p.Version, Asked: asked, Commands: own, Others: others}
}

func commands(p repo.Package) []string {
	var names []string
	for _, b := range p.Bin {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	return names
}

// afterHold runs once Make holds the file name of runs, before handing it to the cache's
// owner: a test's seam, to put another file in its place meanwhile.
var afterHold = func(runs *os.File, name string) {}

// hold opens the file name of the directory runs, creating it if create, and flocks it
// shared, waiting until ctx is done; it touches the one it holds, as the last use of its
// root, unless it has another link, which pkg never makes: a file of root's that the
// owner of a cache root runs from linked in keeps its times (Make's hand-over refuses it),
// and a user's own linked copy (a `cp -al` backup) only makes the root look older.
func hold(ctx context.Context, runs *os.File, name string, create bool) (*os.File, error) {
	for {
		f, err := holdOnce(ctx, runs, name, create)
		if f != nil || err != nil {
			return f, err
		}
	}
}

// holdOnce is hold of the file name names now: nil, nil if Prune removed it while this
// waited for its lock.
func holdOnce(ctx context.Context, runs *os.File, name string, create bool) (*os.File, error) {
	flag := unix.O_RDWR | unix.O_NONBLOCK
	if create {
		flag |= unix.O_CREAT
	}
	f, err := dirfd.Open(runs, name, flag, 0o644)
	if err != nil {
		return nil, err
	}
	fd, path := int(f.Fd()), f.Name()
	for {
		err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	var held, there unix.Stat_t
	if unix.Fstat(fd, &held) != nil || unix.Fstatat(int(runs.Fd()), name, &there, unix.AT_SYMLINK_NOFOLLOW) != nil ||
		held.Ino != there.Ino || held.Dev != there.Dev {
		f.Close() // pruned while this waited
		return nil, nil
	}
	if held.Nlink == 1 { // else its times are a file's elsewhere too, maybe root's
		dirfd.Touch(f) // best effort: a use missed only makes the root look older
	}
	return f, nil
}
