package install

import (
	"context"
	"slices"
)

// Remove uninstalls the named packages together (see Apply): the root loses all of them or
// none. It refuses, changing nothing, when one is not installed or another installed
// package depends on it.
func (r *Root) Remove(names ...string) error {
	var unique []string
	for _, name := range names {
		if !slices.Contains(unique, name) {
			unique = append(unique, name)
		}
	}
	_, err := r.Apply(context.Background(), nil, unique)
	return err
}
