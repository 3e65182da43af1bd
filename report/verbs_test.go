package report

import (
	"io/fs"
	"slices"
	"syscall"
	"testing"
	"time"

	"pkg/config"
	"pkg/db"
	"pkg/install"
	"pkg/pkgtest/testrepo"
	"pkg/publish"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// TestAddedText: the entry added is one line; the notes say what is new or surprising, in
// the order repo add prints them.
func TestAddedText(t *testing.T) {
	p := repo.Package{Name: "t", Version: "2.0-rc1", Archive: "t-2.0-rc1.tar", Size: 2048, Files: 3, SHA256: "ab12"}
	created, added, notes := AddedText("/srv/r", &publish.Added{Package: p, Created: true, Missing: testrepo.Requires("lib>=1"),
		Replaced: []repo.Package{{Name: "t", Version: "2.0-rc1", Archive: "old.tar"}}, Dropped: repo.Dropped{Deleted: []string{"old.tar"}}})
	if want := "/srv/r had no index.json: this is a new repository"; created != want {
		t.Errorf("created = %q, want %q", created, want)
	}
	if want := "added t 2.0-rc1 to /srv/r: t-2.0-rc1.tar, 2.0 KiB, 3 files, sha256 ab12"; added != want {
		t.Errorf("added = %q, want %q", added, want)
	}
	want := []string{
		"2.0-rc1 is a pre-release of 2.0: it sorts before 2.0, and installs take a release while there is one (a packaging revision of 2.0 is written 2.0-1 or 2.0+1)",
		`this replaced the entry of t 2.0-rc1 (archive old.tar, depends [], bin []), and deleted old.tar, which no entry names now`,
		"t 2.0-rc1 depends on lib>=1, which /srv/r does not offer (yet)",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes = %q, want %q", notes, want)
	}
	p.Version = "2.0"
	if created, _, notes := AddedText("/srv/r", &publish.Added{Package: p}); created != "" || len(notes) != 0 {
		t.Errorf("a release added to a repository: %q, notes %q, want none", created, notes)
	}
	if _, added, _ := AddedText("/srv/r", &publish.Added{Package: p, Again: true}); added != "t 2.0 is in /srv/r already, the same archive and entry: t-2.0-rc1.tar, 2.0 KiB, 3 files, sha256 ab12" {
		t.Errorf("the same entry added again: %q, want it said to be there already", added)
	}
}

func TestUnchangedText(t *testing.T) {
	m := repo.Meta{Name: "main", Version: 3, Expires: time.Date(2027, 1, 6, 0, 0, 0, 0, time.UTC)}
	for _, tt := range []struct {
		signed bool
		want   string
	}{
		{false, "/srv/r unchanged: its index.json has every entry already"},
		{true, "/srv/r unchanged: its index.json has every entry already, signed as it was (repository main, version 3, expires 2027-01-06T00:00:00Z)"},
	} {
		if got := UnchangedText("/srv/r", m, tt.signed); got != tt.want {
			t.Errorf("UnchangedText, signed %v = %q, want %q", tt.signed, got, tt.want)
		}
	}
}

func TestRemovedText(t *testing.T) {
	lines, warnings := RemovedText("/srv/r", &repo.Removed{
		Packages: []repo.Package{{Name: "t", Version: "1.0"}}, Dropped: repo.Dropped{Deleted: []string{"pkgs/t-1.0.tar"}},
		Broken: []repo.Need{{Name: "app", Version: "2", Depends: testrepo.Requires("t>=1")[0]}},
	})
	if want := []string{"removed t 1.0 from /srv/r", "deleted /srv/r/pkgs/t-1.0.tar"}; !slices.Equal(lines, want) {
		t.Errorf("lines = %q, want %q", lines, want)
	}
	if want := []string{"app 2 depends on t>=1, which /srv/r no longer satisfies"}; !slices.Equal(warnings, want) {
		t.Errorf("warnings = %q, want %q", warnings, want)
	}
}

// TestLeftWarnings: an archive a change left says why and that it is the user's to
// delete; one outside the repository, that pkg deletes nothing there.
func TestLeftWarnings(t *testing.T) {
	got := LeftWarnings("/srv/r", repo.Dropped{Deleted: []string{"a-1.tar"}, Left: []repo.Leftover{
		{Archive: "a-1-2.tar", Err: &fs.PathError{Op: "remove", Path: "/srv/r/a-1-2.tar", Err: syscall.EPERM}},
		{Archive: "pool/b-1.tar", Err: &fs.PathError{Op: "remove", Path: "/srv/r/pool/b-1.tar", Err: repo.ErrOutside}},
		{Archive: "c-1.tar", Err: &fs.PathError{Op: "sync", Path: "/srv/r", Err: syscall.EIO}},
	}})
	want := []string{
		"could not delete /srv/r/a-1-2.tar, which no entry names now: operation not permitted; the index no longer names it, so delete it by hand",
		"did not delete /srv/r/pool/b-1.tar, which no entry names now: it is outside /srv/r (a symlink leads there), and pkg deletes nothing outside a repository; delete it by hand if nothing else uses it",
		"could not delete /srv/r/c-1.tar, which no entry names now: sync /srv/r: input/output error; the index no longer names it, so delete it by hand",
	}
	if !slices.Equal(got, want) {
		t.Errorf("LeftWarnings = %q\nwant %q", got, want)
	}
}

// TestTrustChangeText: a key trusted says the scope it replaced only when no key of its
// own scope was there; a key distrusted leaves apart the repositories pinned to no key.
func TestTrustChangeText(t *testing.T) {
	priv, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	k, bound := priv.Public(), priv.Public()
	bound.Repo = "main"
	for _, tt := range []struct {
		k        trust.PublicKey
		replaced []trust.PublicKey
		was      string
	}{
		{k, nil, ""},
		{k, []trust.PublicKey{bound}, " (was for repository main only)"},
		{bound, []trust.PublicKey{k}, " (was for any repository)"},
		{bound, []trust.PublicKey{k, bound}, ""},
	} {
		want := "root /r trusts key " + k.ID() + " " + tt.k.Scope() + tt.was
		if got := TrustedText("/r", tt.k, tt.replaced); got != want {
			t.Errorf("TrustedText(%s, %v) = %q, want %q", tt.k.Scope(), tt.replaced, got, want)
		}
	}
	keyed := db.Pin{Name: "main", Location: "https://a/", Keys: []string{"0123456789abcdef"}}
	bare := db.Pin{Name: "other", Location: "https://b/"}
	lines, unkeyed := DistrustedText("/r", k.ID(), []trust.PublicKey{bound}, []db.Pin{bare, keyed})
	want := []string{"root /r no longer trusts key " + k.ID() + " for repository main only", "repository https://a/ (main) stays pinned"}
	if !slices.Equal(lines, want) || len(unkeyed) != 1 || unkeyed[0].Name != "other" {
		t.Errorf("DistrustedText = %q, %v; want %q and the repository other", lines, unkeyed, want)
	}
}

// TestVerbDocuments: why, repo list and run's note are built from the records as given.
func TestVerbDocuments(t *testing.T) {
	recs := []db.Record{
		{Name: "app", Version: "1", Depends: testrepo.Requires("lib")},
		{Name: "lib", Version: "2", Depends: testrepo.Requires("zlib")},
		{Name: "zlib", Version: "3"},
	}
	w := WhyOf(recs, map[string]repo.Requirement{"app": {Name: "app"}}, "zlib")
	if w.Name != "zlib" || w.Version != "3" || w.Requested != "" || !slices.Equal(w.NeededBy, []string{"lib"}) ||
		len(w.Chains) != 1 || !slices.Equal(w.Chains[0], []string{"app", "lib", "zlib"}) {
		t.Errorf("WhyOf(zlib) = %+v", w)
	}
	rs := ReposOf([]config.Repo{{Name: "main", URLs: []string{"https://a/", "https://ghp_tok@m/", "oci://u:pw@r/x/y"}, Priority: 10, File: "/etc/pkg/config.toml"}})
	if len(rs) != 1 || rs[0].Name != "main" || rs[0].From != "/etc/pkg/config.toml" || rs[0].Priority != 10 ||
		!slices.Equal(rs[0].URLs, []string{"https://a/", "https://m/", "oci://r/x/y"}) {
		t.Errorf("ReposOf = %+v", rs)
	}
	out := &txn.Outcome{Results: []*install.Result{{Name: "a", Version: "1.0"}, {Name: "b", Version: "2.0"}}}
	if got := InstalledText(out); got != "a 1.0, b 2.0" {
		t.Errorf("InstalledText = %q", got)
	}
}
