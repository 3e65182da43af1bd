package txn

import (
	"fmt"
	"slices"

	"pkg/trust"
)

// ParseKeySource returns the keys of texts (trust.ParseKeys) as the source name.
func ParseKeySource(name string, texts ...string) (KeySource, error) {
	s := KeySource{Name: name}
	for _, text := range texts {
		keys, err := trust.ParseKeys(text)
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
		if slices.ContainsFunc(s.Keys, func(k trust.PublicKey) bool { return k.ID() == id }) {
			names = append(names, s.Name)
		}
	}
	return names
}
