package session

import (
	"errors"
	"testing"

	"pkg/db"
	"pkg/repo"
)

// TestBesideKind refuses a local archive file whose package an installed one of another
// kind would sit beside, one of the two of kind npm (npm pack's tarball installed as a
// plain tree, from this file or another, then given as npm's; or the reverse), naming the
// installed package; one of a kind that takes the installed one's place is not refused.
func TestBesideKind(t *testing.T) {
	const file = "/files/tool-1.0.0.tgz"
	npm := repo.Package{Name: "tool", Version: "1.0.0", Kind: repo.KindNPM, Origin: file}
	plain := repo.Package{Name: "tool", Version: "1.0.0", Origin: file}
	for _, c := range []struct {
		what      string
		installed db.Record
		given     repo.Package
		refused   bool
	}{
		{"plain from the file, npm now", db.Record{Name: "tool", Version: "1.0.0", Origin: file}, npm, true},
		{"plain from another file", db.Record{Name: "tool", Version: "1.0.0", Origin: "/old/tool-1.0.0.tgz"}, npm, true},
		{"npm from a repository, a plain file", db.Record{Name: "tool", Version: "2.0.0", Kind: repo.KindNPM}, plain, true},
		{"deb, a plain file", db.Record{Name: "tool", Version: "1.0", Kind: repo.KindDeb}, plain, false},
		{"npm, npm", db.Record{Name: "tool", Version: "0.9.0", Kind: repo.KindNPM}, npm, false},
		{"another name", db.Record{Name: "other", Version: "1.0.0", Origin: file}, npm, false},
	} {
		err := besideKind([]repo.Package{c.given}, []db.Record{c.installed})
		var ke *KindError
		if got := errors.As(err, &ke); got != c.refused || got && (ke.Name != c.installed.Name || ke.Version != c.installed.Version || ke.Kind != c.installed.Kind) {
			t.Errorf("%s: besideKind = %v, want refused %v naming %s %s", c.what, err, c.refused, c.installed.Name, c.installed.Version)
		}
	}
}
