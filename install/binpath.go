package install

import (
	"strings"

	"pkg/internal/shell"
)

// BinOffPath returns the root's bin/ if it holds commands and is not on path (a PATH
// value), else "".
func (r *Root) BinOffPath(path string) string {
	dir := r.offPath(path)
	if dir == "" {
		return ""
	}
	if names, _ := r.names(place{in: bin}); len(names) == 0 {
		return ""
	}
	return dir
}

// offPath returns the root's bin/ if it is not on path, whatever it holds, else "".
func (r *Root) offPath(path string) string {
	if dir := r.path("bin"); !shell.OnPath(dir, path) {
		return dir
	}
	return ""
}

// SayOffPath returns the root's bin/ where it is not on path (a PATH value) and due says
// its note is to be told, else "", and has the next Apply's commit record key in that
// state (SayWithCommit) where bin/ then holds commands (commandsAfter, a guess: BinOffPath
// tells after the commit, and the caller ends a condition it finds gone).
func (r *Root) SayOffPath(path, key string, due func(state string) bool) string {
	dir := r.offPath(path)
	if dir != "" && due(dir) {
		r.sayings = append(r.sayings, said{key: key, state: dir, commands: true})
		return dir
	}
	return ""
}

// commandsAfter reports whether bin/ holds something once staged are committed: a
// command of one of them, linked or its own member, or whatever bin/ holds now (a
// removal in the change may take it).
func (r *Root) commandsAfter(staged []*Staged) bool {
	for _, s := range staged {
		if len(r.bins(s.rec.Kind, s.rec.Name, s.rec.Version, s.rec.Bin)) > 0 {
			return true
		}
		for _, e := range s.entries {
			if strings.HasPrefix(e.path, "bin/") {
				return true
			}
		}
	}
	names, _ := r.names(place{in: bin})
	return len(names) > 0
}
