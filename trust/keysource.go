package trust

import (
	"fmt"
	"slices"
)

// KeySource is where trusted keys come from, and those keys.
type KeySource struct {
	Name string // a flag, a variable, or a root's trusted-keys file
	Keys []PublicKey
}

// ParseKeySource returns the keys of texts (parseKeys) as the source name.
func ParseKeySource(name string, texts ...string) (KeySource, error) {
	s := KeySource{Name: name}
	for _, text := range texts {
		keys, err := parseKeys(text)
		if err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
		s.Keys = append(s.Keys, keys...)
	}
	return s, nil
}

// Trusting returns the names of the sources that trust the key of the id.
func Trusting(sources []KeySource, id string) []string {
	var names []string
	for _, s := range sources {
		if slices.ContainsFunc(s.Keys, func(k PublicKey) bool { return k.ID() == id }) {
			names = append(names, s.Name)
		}
	}
	return names
}

// NewPolicy is the policy of trusting the keys of sources, each for every repository
// unless bound to one by name, and requiring a signature where requireSigned says so or
// a key is trusted.
func NewPolicy(sources []KeySource, requireSigned bool) Policy {
	p := Policy{RequireSigned: requireSigned}
	for _, s := range sources {
		p = p.With(s.Keys...)
	}
	return p
}
