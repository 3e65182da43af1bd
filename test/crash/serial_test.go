package crash

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/repo"
)

// model replays pkg commands on a state, for checking that concurrent runs end as some
// serial order of them would: install resolves against the published index, sets every
// resolved package's version and records its arguments' names as asked for (a key
// "+NAME" of the state, as withRequested marks what the root records); remove refuses a
// name not installed, deletes the marks of what it removes, takes along the installed packages
// that depend on what it removes where none of them, or of theirs, was asked for, and
// refuses where one was; every other command changes nothing.
type model struct {
	w       world
	ix      *repo.Index
	resolve map[string]state // install arguments → what they resolve to
}

func newModel(t *testing.T, repoDir string, w world) *model {
	data, err := os.ReadFile(filepath.Join(repoDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := repo.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return &model{w: w, ix: ix, resolve: map[string]state{}}
}

// apply returns the state after args, and whether the command succeeds there.
func (m *model) apply(s state, args []string) (state, bool) {
	switch args[0] {
	case "install":
		return m.resolved(s, args[1:])
	case "remove":
		names := slices.Clone(args[1:])
		for _, n := range names {
			if _, ok := s[n]; !ok {
				return s, false
			}
		}
		for {
			var users []string
			for n, v := range s {
				if asked(n) || slices.Contains(names, n) {
					continue
				}
				if slices.ContainsFunc(m.w[n][v].depends, func(r repo.Requirement) bool { return slices.Contains(names, r.Name) }) {
					users = append(users, n)
				}
			}
			if len(users) == 0 {
				break
			}
			if slices.ContainsFunc(users, func(u string) bool { _, ok := s["+"+u]; return ok }) {
				return s, false
			}
			names = append(names, users...)
		}
		next := maps.Clone(s)
		for _, n := range names {
			delete(next, n)
			delete(next, "+"+n)
		}
		return next, true
	}
	return s, true
}

// asked reports whether the key n of a model's state records a name asked for.
func asked(n string) bool { return strings.HasPrefix(n, "+") }

// resolved returns the state an install of args leads to from s, as pkg resolves it, and
// whether it resolves at all.
func (m *model) resolved(s state, args []string) (state, bool) {
	key := s.String() + " " + filepath.Join(args...)
	if next, ok := m.resolve[key]; ok {
		return next, next != nil
	}
	var reqs []repo.Requirement
	for _, a := range args {
		r, err := repo.ParseRequirement(a)
		if err != nil {
			panic(err)
		}
		reqs = append(reqs, r)
	}
	var installed []repo.Package
	for n, v := range s {
		if !asked(n) {
			installed = append(installed, repo.Package{Name: n, Version: v, Depends: m.w[n][v].depends, SHA256: m.w[n][v].sha})
		}
	}
	pkgs, err := m.ix.ResolveInstalled(installed, reqs)
	var next state
	if err == nil {
		next = state{}
		for _, p := range pkgs {
			next[p.Name] = p.Version
		}
		for n := range s {
			if asked(n) {
				next[n] = ""
			}
		}
		for _, r := range reqs {
			next["+"+r.Name] = ""
		}
	}
	m.resolve[key] = next
	return next, next != nil
}

// serialOrder looks for an order of cmds that, run one at a time from before, gives every
// command its observed outcome (ok) and ends at after, with its marks of what was asked
// for ("+NAME"); found says whether one ends at after's packages, and end is where the
// order returned ends: at after where any order does, else at its packages alone.
func (m *model) serialOrder(before state, cmds [][]string, ok []bool, after state) (order []int, end state, found bool) {
	used := make([]bool, len(cmds))
	var run []int
	var search func(s state) bool
	search = func(s state) bool {
		if len(run) == len(cmds) {
			if !maps.Equal(packagesOf(s), packagesOf(after)) {
				return false
			}
			if !found || maps.Equal(s, after) {
				order, end, found = slices.Clone(run), s, true
			}
			return maps.Equal(s, after)
		}
		for i := range cmds {
			if used[i] {
				continue
			}
			next, succeeded := m.apply(s, cmds[i])
			if succeeded != ok[i] {
				continue
			}
			used[i], run = true, append(run, i)
			if search(next) {
				return true
			}
			used[i], run = false, run[:len(run)-1]
		}
		return false
	}
	search(before)
	return order, end, found
}

// packagesOf returns s without its marks of what was asked for.
func packagesOf(s state) state {
	p := maps.Clone(s)
	maps.DeleteFunc(p, func(n, _ string) bool { return asked(n) })
	return p
}

// askedOf returns the names s marks as asked for, sorted.
func askedOf(s state) []string {
	var names []string
	for n := range s {
		if name, ok := strings.CutPrefix(n, "+"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
