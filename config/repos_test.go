package config

import (
	"errors"
	"reflect"
	"testing"

	"pkg/internal/termtext"
	"pkg/repo"
)

// withURL returns r with its first URL first instead.
func withURL(r Repo, first string) Repo {
	r.URLs = append([]string{first}, r.URLs[1:]...)
	return r
}

func TestUse(t *testing.T) {
	team := Repo{Name: "team", URLs: []string{"https://team.example/r", "https://mirror.example/r"}, Priority: 10, File: "pkg.toml"}
	main := Repo{Name: "main", URLs: []string{"https://main.example/pkgs/"}, File: "pkg.toml"}
	cfg := &Config{Repos: []Repo{team, main}}
	flag := func(name, loc string) Repo { return Repo{Name: name, URLs: []string{loc}, File: "--repo"} }
	for _, tc := range []struct {
		name   string
		given  []Repo
		byName bool
		want   []Repo
	}{
		{"configured only", nil, false, []Repo{team, main}},
		{"given first, named after its path", []Repo{flag("", "/srv/Local/")}, false,
			[]Repo{{Name: "local", URLs: []string{"/srv/Local/"}, File: "--repo", Naming: ByLocation}, team, main}},
		{"named after its host", []Repo{flag("", "https://x.example/index.json")}, false,
			[]Repo{{Name: "x.example", URLs: []string{"https://x.example/index.json"}, File: "--repo", Naming: ByLocation}, team, main}},
		{"a configured URL is that repository", []Repo{flag("", "https://main.example/pkgs/")}, false, []Repo{main, team}},
		{"a name taken gets a suffix", []Repo{flag("team", "/a"), flag("team", "/b")}, false,
			[]Repo{{Name: "team", URLs: []string{"/a"}, File: "--repo"}, {Name: "team-2", URLs: []string{"/b"}, File: "--repo"}, main}},
		{"a flag's name is not the configured one", []Repo{flag("main", "/m")}, false,
			[]Repo{{Name: "main", URLs: []string{"/m"}, File: "--repo"}, team}},
		{"a lockfile's name is", []Repo{{Name: "main", URLs: []string{"/m"}, File: "lockfile l"}}, true, []Repo{main, team}},
		{"a lockfile's name before another's location", []Repo{{Name: "main", URLs: []string{"https://team.example/r"}, File: "lockfile l"}}, true, []Repo{main, team}},
		{"a configured URL, written otherwise", []Repo{flag("", "https://main.example/pkgs/index.json")}, false, []Repo{main, team}},
		{"a configured URL named as configured", []Repo{flag("main", "https://main.example/pkgs")}, false, []Repo{main, team}},
	} {
		if got, err := cfg.Use(tc.given, tc.byName); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Use = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// TestUseUserInfo: a configured location given with user information is that repository,
// its keys included, whichever user information either holds: the given one goes in its
// first URL, for its requests alone, not its mirrors.
func TestUseUserInfo(t *testing.T) {
	team := Repo{Name: "team", URLs: []string{"https://team.example/r", "https://mirror.example/r"}, Keys: []string{"pkg-ed25519:x"}, File: "pkg.toml"}
	keyed := Repo{Name: "keyed", URLs: []string{"https://cfg:secret@keyed.example/r/"}, Keys: []string{"pkg-ed25519:y"}, File: "pkg.toml"}
	cfg := &Config{Repos: []Repo{keyed, team}}
	for _, tc := range []struct {
		given Repo
		want  []Repo
	}{
		{Repo{URLs: []string{"https://u:p@team.example/r/index.json"}}, []Repo{withURL(team, "https://u:p@team.example/r"), keyed}},
		{Repo{Name: "team", URLs: []string{"https://tok@team.example/r/"}}, []Repo{withURL(team, "https://tok@team.example/r"), keyed}},
		{Repo{URLs: []string{"https://u:p@keyed.example/r"}}, []Repo{withURL(keyed, "https://u:p@keyed.example/r/"), team}},
		{Repo{URLs: []string{"https://keyed.example/r"}}, []Repo{keyed, team}},
	} {
		if got, err := cfg.Use([]Repo{tc.given}, false); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Use(%s=%s) = %+v, %v; want %+v", tc.given.Name, tc.given.URLs[0], got, err, tc.want)
		}
	}
	// A directory's location has no host to send user information to: a file URL given
	// with some is the directory as configured, not a path of its own that shows it.
	for _, local := range []Repo{{Name: "local", URLs: []string{"/srv/local"}, File: "pkg.toml"}, {Name: "local", URLs: []string{"file:///srv/local/"}, File: "pkg.toml"}} {
		cfg := &Config{Repos: []Repo{local}}
		if got, err := cfg.Use([]Repo{{URLs: []string{"file://u:p@/srv/local"}}}, false); err != nil || !reflect.DeepEqual(got, []Repo{local}) {
			t.Errorf("Use(file://u:p@/srv/local) with %s configured = %+v, %v; want it as configured", local.URLs[0], got, err)
		}
	}
}

// TestUseOCI: a registry's reference is one location whether it writes the default tag or
// not, and whatever user information it holds, so that --repo with either is the
// repository configured with the other, its credentials and keys, the given user
// information kept for its requests; another tag is another repository.
func TestUseOCI(t *testing.T) {
	reg := Repo{Name: "reg", URLs: []string{"oci://ghcr.io/org/pkgs"}, File: "pkg.toml"}
	tagged := Repo{Name: "tagged", URLs: []string{"oci://ghcr.io/org/tools:latest/"}, File: "pkg.toml"}
	cfg := &Config{Repos: []Repo{reg, tagged}}
	for _, tc := range []struct {
		loc  string
		want []Repo
	}{
		{"oci://ghcr.io/org/pkgs:latest", []Repo{reg, tagged}},
		{"oci://ghcr.io/org/pkgs:latest/", []Repo{reg, tagged}},
		{"oci://ghcr.io/org/pkgs/", []Repo{reg, tagged}},
		{"oci://ghcr.io/org/tools", []Repo{tagged, reg}},
		{"oci://ghcr.io/org/pkgs:stable", []Repo{{Name: "pkgs", URLs: []string{"oci://ghcr.io/org/pkgs:stable"}, File: "--repo", Naming: ByLocation}, reg, tagged}},
		{"oci://u:p@ghcr.io/org/pkgs", []Repo{withURL(reg, "oci://u:p@ghcr.io/org/pkgs"), tagged}},
		{"oci://u:p@ghcr.io/org/tools:latest", []Repo{withURL(tagged, "oci://u:p@ghcr.io/org/tools:latest/"), reg}},
	} {
		if got, err := cfg.Use([]Repo{{URLs: []string{tc.loc}, File: "--repo"}}, false); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Use(%s) = %+v, %v; want %+v", tc.loc, got, err, tc.want)
		}
	}
}

// TestUseConflict gives a name to the location of a configured repository of another
// name, one not configured and one configured elsewhere: each is refused, naming both.
func TestUseConflict(t *testing.T) {
	team := Repo{Name: "team", URLs: []string{"/srv/team"}, File: "/etc/pkg/config.toml"}
	stable := Repo{Name: "stable", URLs: []string{"/srv/stable"}, File: "/etc/pkg/config.toml"}
	web := Repo{Name: "web", URLs: []string{"https://example.com/team/"}, File: "/etc/pkg/config.toml"}
	cfg := &Config{Repos: []Repo{stable, team, web}}
	for _, g := range []Repo{
		{Name: "x", URLs: []string{"/srv/team"}, File: "--repo"},
		{Name: "team", URLs: []string{"file:///srv/stable/"}, File: "PKG_REPO"},
		{Name: "y", URLs: []string{"https://u:secret@example.com/team"}, File: "--repo"},
	} {
		_, err := cfg.Use([]Repo{g}, false)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Given.Name != g.Name || ce.Configured.URLs[0] == g.URLs[0] && ce.Configured.Name == g.Name {
			t.Errorf("Use(%s=%s): %v; want a *ConflictError", g.Name, g.URLs[0], err)
			continue
		}
		want := "repository " + g.Name + " (" + termtext.WithoutCredentials(g.URLs[0]) + ", from " + g.File + "): that location is repository " + ce.Configured.Name + ", configured in /etc/pkg/config.toml"
		if err.Error() != want {
			t.Errorf("Use(%s=%s): %q, want %q", g.Name, g.URLs[0], err, want)
		}
	}
}

func TestSplitRepo(t *testing.T) {
	for _, tc := range []struct{ in, name, loc string }{
		{"team=/srv/r", "team", "/srv/r"},
		{"/srv/a=b", "", "/srv/a=b"},
		{"https://x/?a=b", "", "https://x/?a=b"},
		{"team=", "team", ""},
		{"", "", ""},
	} {
		if name, loc := SplitRepo(tc.in); name != tc.name || loc != tc.loc {
			t.Errorf("SplitRepo(%q) = %q, %q, want %q, %q", tc.in, name, loc, tc.name, tc.loc)
		}
	}
}

func TestLockUses(t *testing.T) {
	inEffect := []Repo{{Name: "team", URLs: []string{"https://team.example/r", "https://m.example/r"}}}
	two := &repo.Lock{Repos: []repo.LockRepo{{Name: "team", URL: "https://old.example/r"}, {Name: "other", URL: "/o"}}}
	got := LockUses(two, inEffect)
	want := map[string]Repo{"team": inEffect[0], "other": {Name: "other", URLs: []string{"/o"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LockUses = %+v, want %+v", got, want)
	}
	one := &repo.Lock{Repo: "/recorded"}
	if got := LockUses(one, nil)[""]; !reflect.DeepEqual(got.URLs, []string{"/recorded"}) {
		t.Errorf("LockUses of a lock of one, none in effect = %+v, want its record", got)
	}
	if got := LockUses(one, inEffect)[""]; got.Name != "team" {
		t.Errorf("LockUses of a lock of one = %+v, want the first in effect", got)
	}
}
