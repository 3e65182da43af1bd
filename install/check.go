package install

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pkg/db"
	"pkg/repo"
)

// A clashError refuses to install a package whose command another package provides, one
// installed, or, with Incoming, one installed with it, where neither replaces the other
// (commandStacks).
type clashError struct {
	Package, Version string
	Command          string
	Other            string // the package that provides it too
	Incoming         bool
}

func (e *clashError) Error() string {
	if e.Incoming {
		return fmt.Sprintf("install %s %s: command %q is also provided by %s, installed with it", e.Package, e.Version, e.Command, e.Other)
	}
	have := e.Package
	if strings.HasPrefix(e.Other, e.Package+"@") { // another version of its npm name: say which
		have += " " + e.Version
	}
	return fmt.Sprintf("install %s %s: command %q is already provided by package %s (remove %s first to have %s's)",
		e.Package, e.Version, e.Command, e.Other, e.Other, have)
}

// commandStacks returns, by command, the keys of the packages of next that provide it
// (bins), stacked as a prefix path's owners are (conflicts.add): each goes above the first
// it replaces (Replaces, at its version), where every package above it replaces it, and
// goes in after those it replaces (stackOrder), so that a stack is the one its installs
// built whatever the order upgrades left. bin/ holds the command of the first. An
// incoming package that fits nowhere is a *clashError naming one above it that does not
// replace it; an installed one goes under the others, and is among the strays returned.
func commandStacks(next map[string]*db.Record, incoming map[string]bool, bins func(*db.Record) []repo.Command) (map[string][]string, []stray, error) {
	// Sorted with what the order compares read once a package, not twice a comparison.
	type sortKey struct {
		key       string
		incoming  bool
		installed time.Time
	}
	keys := make([]sortKey, 0, len(next))
	for k, p := range next {
		keys = append(keys, sortKey{k, incoming[k], p.Installed})
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		return cmp.Or(cmpBool(a.incoming, b.incoming), a.installed.Compare(b.installed), strings.Compare(a.key, b.key))
	})
	providers := make(map[string][]string) // command → the packages providing it, in order
	for _, sk := range keys {
		k := sk.key
		for _, b := range bins(next[k]) {
			if !slices.Contains(providers[b.Name], k) {
				providers[b.Name] = append(providers[b.Name], k)
			}
		}
	}
	stacks := make(map[string][]string, len(providers))
	var strays []stray
	for _, cmd := range slices.Sorted(maps.Keys(providers)) {
		var s []string
		for _, k := range stackOrder(next, providers[cmd]) {
			p := next[k]
			at := slices.IndexFunc(s, func(o string) bool { return replaces(p, next[o]) })
			if at < 0 {
				at = len(s)
			}
			if i := slices.IndexFunc(s[:at], func(o string) bool { return !replaces(next[o], p) }); i >= 0 {
				if incoming[k] {
					return nil, nil, &clashError{Package: p.Name, Version: p.Version, Command: cmd, Other: s[i], Incoming: incoming[s[i]]}
				}
				strays = append(strays, stray{Command: cmd, Key: k, Other: s[i]})
				at = len(s)
			}
			s = slices.Insert(s, at, k)
		}
		stacks[cmd] = s
	}
	return stacks, strays, nil
}

// checkStacks refuses a change to recs, the installed packages, after which the root
// holds next, installing staged and removing remove, where a command's providers do not
// stack (commandStacks): an incoming package that fits nowhere (*clashError), or an
// installed one that fitted before (*strandedError). A stray of the root before (made so
// by an older pkg) is left as it is.
func checkStacks(recs []db.Record, next map[string]*db.Record, staged []*db.Record, remove []string, bins func(*db.Record) []repo.Command) error {
	_, strays, err := commandStacks(next, keysOf(staged), bins)
	if err != nil || len(strays) == 0 {
		return err
	}
	installed := named(recs)
	stacks, before, _ := commandStacks(installed, nil, bins) // nothing incoming: no clash
	for _, st := range strays {
		if slices.ContainsFunc(before, func(b stray) bool { return b.Command == st.Command && b.Key == st.Key }) {
			continue
		}
		p, o := next[st.Key], next[st.Other]
		k := between(stacks[st.Command], st, func(k string) bool {
			return slices.Contains(remove, k) || next[k] != nil && slices.Contains(staged, next[k])
		})
		if q := next[k]; q != nil && slices.ContainsFunc(bins(q), func(b repo.Command) bool { return b.Name == st.Command }) &&
			!replaces(q, p) && !replaces(p, q) {
			// The package upgraded in between still provides the command, out of the range
			// that stacked the stray over it or it over the stray: its own clash.
			return &clashError{Package: q.Name, Version: q.Version, Command: st.Command, Other: st.Key}
		}
		e := &strandedError{Command: st.Command, Package: p.Name, Version: p.Version, Other: o.Name, OtherVersion: o.Version}
		switch q := next[k]; {
		case q != nil:
			e.Change = "install " + q.Name + " " + q.Version
		case k != "":
			e.Change = "remove " + k
		}
		return e
	}
	return nil
}

// between returns the package of stack, a command's stack before a change, that changed
// reports and that stood between the stray's two packages; else the one of the two that
// changed (the Other upgraded out of the Replaces that stacked it); else the first that
// changed anywhere in the stack; or "".
func between(stack []string, st stray, changed func(string) bool) string {
	if i, j := slices.Index(stack, st.Key), slices.Index(stack, st.Other); i >= 0 && j >= 0 {
		lo, hi := min(i, j)+1, max(i, j)
		if k := slices.IndexFunc(stack[lo:hi], changed); k >= 0 {
			return stack[lo+k]
		}
	}
	for _, k := range []string{st.Other, st.Key} {
		if slices.Contains(stack, k) && changed(k) {
			return k
		}
	}
	if k := slices.IndexFunc(stack, changed); k >= 0 {
		return stack[k]
	}
	return ""
}

// A strandedError refuses a change after which an installed package's command would be
// provided by another too, neither replacing the other (commandStacks): the change removes
// or upgrades the package between them, which replaced the one and the other it.
type strandedError struct {
	Change              string // "remove KEY" or "install NAME VERSION": what strands it
	Command             string
	Package, Version    string
	Other, OtherVersion string
}

func (e *strandedError) Error() string {
	return fmt.Sprintf("%s: command %q of %s %s would be left beside %s %s's, neither replacing the other (remove %s or %s too, or first)",
		cmp.Or(e.Change, "change"), e.Command, e.Package, e.Version, e.Other, e.OtherVersion, e.Package, e.Other)
}

// A stray is an installed package whose command Command fits in no stack of its
// providers (commandStacks): Other, above it, does not replace it, nor it Other. A change
// that removes or upgrades the package between them leaves one (a strandedError).
type stray struct {
	Command, Key, Other string
}

// stackOrder returns the keys ks of next, in the order given, but each after the packages
// of ks it replaces and that do not replace it: a package then goes in above those it
// replaces, as when it was installed. Where Replaces make a longer cycle, the order given
// decides.
func stackOrder(next map[string]*db.Record, ks []string) []string {
	if len(ks) < 2 {
		return ks
	}
	waits := func(p, q string) bool { return p != q && replaces(next[p], next[q]) && !replaces(next[q], next[p]) }
	left := slices.Clone(ks)
	out := make([]string, 0, len(ks))
	for len(left) > 0 {
		i := max(slices.IndexFunc(left, func(p string) bool {
			return !slices.ContainsFunc(left, func(q string) bool { return waits(p, q) })
		}), 0)
		out = append(out, left[i])
		left = slices.Delete(left, i, i+1)
	}
	return out
}

// tops returns, by command, the key of the package whose command bin/ holds: the top of
// each of stacks (commandStacks).
func tops(stacks map[string][]string) map[string]string {
	h := make(map[string]string, len(stacks))
	for cmd, s := range stacks {
		h[cmd] = s[0]
	}
	return h
}

// holders is commandStacks' holders of r's commands (Root.bins) in next.
func (r *Root) holders(next map[string]*db.Record, incoming map[string]bool) (map[string]string, error) {
	stacks, _, err := commandStacks(next, incoming, func(p *db.Record) []repo.Command { return r.bins(p.Kind, p.Name, p.Version, p.Bin) })
	return tops(stacks), err
}

// keysOf returns the set of the keys of recs.
func keysOf(recs []*db.Record) map[string]bool {
	keys := make(map[string]bool, len(recs))
	for _, p := range recs {
		keys[p.Key()] = true
	}
	return keys
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// An unmanagedError is a directory in pkgs/, or with Command a command in bin/, where a
// package goes that pkg did not make: it is not pkg's to replace.
type unmanagedError struct {
	Path    string
	Command bool
}

func (e *unmanagedError) Error() string {
	if e.Command {
		return fmt.Sprintf("command %s exists and is not managed by pkg: remove or rename it, then try again", e.Path)
	}
	return e.Path + " exists and is not managed by pkg: remove or rename it, then try again"
}

// CheckChange refuses a change to the root at dir, which holds recs (none where there is
// no root yet), installing pkgs and removing the names remove, where Apply or Stage would
// refuse it on what the index and the database say alone: a command two packages provide,
// a dependency the change breaks, a removal of what is not installed, a package with lib
// directories in a root whose path cannot be in LD_LIBRARY_PATH. It reads nothing, so a
// dry run says what the change would, and a change fails before it downloads.
func CheckChange(dir string, recs []db.Record, pkgs []repo.Package, remove []string) error {
	if err := checkApply(recs, records(pkgs), remove, npmless); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		if len(p.Lib) > 0 && strings.ContainsAny(dir, ":;") {
			return fmt.Errorf("install %s %s: %w", p.Name, p.Version, libPathError(dir))
		}
	}
	return nil
}

// Check is CheckChange in r, with what r's directories say: a directory in pkgs/ no record
// owns, or a command in bin/ that is not pkg's, where a package of pkgs goes
// (*unmanagedError). It changes nothing, and works on a root opened read-only.
func (r *Root) Check(pkgs []repo.Package, remove []string) error {
	recs, err := r.db.List()
	if err != nil {
		return err
	}
	if err := CheckChange(r.dir, recs, pkgs, remove); err != nil {
		return err
	}
	if err := r.checkUnmanaged(recs, records(pkgs)); err != nil {
		return err
	}
	for _, p := range pkgs {
		if _, err := r.checkBins(p); err != nil {
			return fmt.Errorf("install %s %s: %w", p.Name, p.Version, err)
		}
	}
	return nil
}

// npmless is the commands of p in bin/ where what was asked for is not known: all but an
// npm instance's, which only a request gives (Root.bins).
func npmless(p *db.Record) []repo.Command {
	if p.Kind == repo.KindNPM {
		return nil
	}
	return p.Bin
}

// records returns the records of pkgs as far as the index describes them.
func records(pkgs []repo.Package) []*db.Record {
	recs := make([]*db.Record, len(pkgs))
	for i, p := range pkgs {
		recs[i] = &db.Record{Name: p.Name, Version: p.Version, Kind: p.Kind, SHA256: p.SHA256, Depends: p.Depends, Optional: p.Optional, Peers: p.Peers, Bin: p.Bin, Lib: p.Lib,
			Provides: p.Provides, Conflicts: p.Conflicts, Replaces: p.Replaces, Into: intoOf(&p), Env: p.Env}
	}
	return recs
}

func libPathError(dir string) error {
	return fmt.Errorf("root %s holds ':' or ';', which cannot be in the LD_LIBRARY_PATH its commands need", dir)
}
