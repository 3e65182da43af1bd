package repo

import (
	"slices"
	"strings"
)

// order returns the chosen packages with every package after its dependencies, taking
// the first ready name each time; the packages of a dependency cycle come together, by
// name, once every package the cycle depends on has come.
func (r *resolver) order() []Package {
	comps, of := r.components()
	waiting := make([]int, len(comps)) // the components each waits on, not yet placed
	users := make([][]int, len(comps))
	for i, comp := range comps {
		var on []int
		for _, name := range comp {
			for _, d := range r.dependsOn(name) {
				if j := of[d]; j != i && !slices.Contains(on, j) {
					on = append(on, j)
					users[j] = append(users[j], i)
				}
			}
		}
		waiting[i] = len(on)
	}
	first := func(a, b int) int { return strings.Compare(comps[a][0], comps[b][0]) }
	var ready []int
	for i, n := range waiting {
		if n == 0 {
			ready = append(ready, i)
		}
	}
	slices.SortFunc(ready, first)
	out := make([]Package, 0, len(r.chosen))
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		for _, name := range comps[i] {
			out = append(out, r.chosen[name].pkg)
		}
		for _, u := range users[i] {
			if waiting[u]--; waiting[u] == 0 {
				k, _ := slices.BinarySearchFunc(ready, u, first)
				ready = slices.Insert(ready, k, u)
			}
		}
	}
	return out
}

// dependsOn returns the names of the chosen packages that meet the depends of the chosen
// name (chosenFor), but for name itself, sorted, each once.
func (r *resolver) dependsOn(name string) []string {
	var on []string
	for _, d := range r.chosen[name].deps {
		if p, ok := r.chosenFor(d); ok && p.Name != name {
			on = append(on, p.Name)
		}
	}
	slices.Sort(on)
	return slices.Compact(on)
}

// components returns the strongly connected components of the chosen packages'
// dependencies (Tarjan's algorithm), each sorted by name, and the component of each name.
func (r *resolver) components() ([][]string, map[string]int) {
	names := make([]string, 0, len(r.chosen))
	for name := range r.chosen {
		names = append(names, name)
	}
	slices.Sort(names)
	t := tarjan{deps: r.dependsOn, index: make(map[string]int), low: make(map[string]int), on: make(map[string]bool), of: make(map[string]int)}
	for _, name := range names {
		if _, seen := t.index[name]; !seen {
			t.visit(name)
		}
	}
	return t.comps, t.of
}

// tarjan is the state of Tarjan's strongly connected components algorithm.
type tarjan struct {
	deps      func(string) []string
	index     map[string]int
	low       map[string]int
	on        map[string]bool // on the stack
	stack     []string
	comps     [][]string
	of        map[string]int // name → its component's index in comps
	nextIndex int
}

func (t *tarjan) visit(v string) {
	t.index[v], t.low[v] = t.nextIndex, t.nextIndex
	t.nextIndex++
	t.stack = append(t.stack, v)
	t.on[v] = true
	for _, w := range t.deps(v) {
		if _, seen := t.index[w]; !seen {
			t.visit(w)
			t.low[v] = min(t.low[v], t.low[w])
		} else if t.on[w] {
			t.low[v] = min(t.low[v], t.index[w])
		}
	}
	if t.low[v] != t.index[v] {
		return
	}
	var comp []string
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.on[w] = false
		t.of[w] = len(t.comps)
		comp = append(comp, w)
		if w == v {
			break
		}
	}
	slices.Sort(comp)
	t.comps = append(t.comps, comp)
}
