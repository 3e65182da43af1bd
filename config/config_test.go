package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"pkg/trust"
)

const (
	keyA = "pkg-ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
	keyB = "pkg-ed25519:PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw="
)

// example is docs/config.md's example.
var example = `# pkg's configuration
[cache]
max-size = "20GiB"
older-than = "30d"

[repo.stable]
urls = [
  "https://pkgs.example.com/stable/",
  "https://mirror.example.org/pkg/stable/",
]
keys = ["` + keyA + `"]
priority = 10

[repo.team]
urls = ["https://artifacts.example.com/team/"]
keys = ["team=` + keyB + `"]
priority = 20

[repo.local]
urls = ["/srv/pkg/local"]
`

func TestParse(t *testing.T) {
	got, err := parse("config.toml", []byte(example), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Repos: []Repo{
			{Name: "team", URLs: []string{"https://artifacts.example.com/team/"}, Keys: []string{"team=" + keyB}, Priority: 20, File: "config.toml"},
			{Name: "stable", URLs: []string{"https://pkgs.example.com/stable/", "https://mirror.example.org/pkg/stable/"}, Keys: []string{keyA}, Priority: 10, File: "config.toml"},
			{Name: "local", URLs: []string{"/srv/pkg/local"}, File: "config.toml"},
		},
		Cache:      Cache{MaxSize: 20 << 30, OlderThan: 30 * 24 * time.Hour},
		maxSizeSet: true, olderThanSet: true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\ngot  %+v\nwant %+v", got, want)
	}
}

func write(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadPrecedence loads a system, a user and a root file: a repository is the last
// file's of its name or its location, whole (its mirrors and keys are not mixed with an
// earlier file's), others are kept, each cache limit is the last one set (if to "0", no limit), and a
// missing file is skipped.
func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	system := write(t, filepath.Join(dir, "etc", "config.toml"), `
[cache]
max-size = "100GB"
older-than = "90d"
[repo.stable]
urls = ["https://system.example/stable/", "https://system-mirror.example/stable/"]
keys = ["`+keyA+`"]
priority = 5
[repo.distro]
urls = ["https://distro.example/"]
`)
	user := write(t, filepath.Join(dir, "home", "config.toml"), `
[cache]
older-than = "720h"
max-size = "0"
[repo.stable]
urls = ["https://user.example/stable/"]
priority = 1
`)
	root := write(t, filepath.Join(dir, "root", ".pkg", "config.toml"), `
[cache]
older-than = "1d"
[repo.project]
urls = ["file:///srv/project"]
priority = 3
[repo.mine]
urls = ["https://distro.example/index.json"]
`)
	got, err := Load(system, filepath.Join(dir, "missing.toml"), user, root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got.Repos {
		names = append(names, r.Name+"@"+r.File)
	}
	// The root's mine, at distro's location, takes its place: a location is one repository.
	if want := []string{"project@" + root, "stable@" + user, "mine@" + root}; !reflect.DeepEqual(names, want) {
		t.Errorf("repositories %q, want %q", names, want)
	}
	if r := got.Repos[1]; !reflect.DeepEqual(r.URLs, []string{"https://user.example/stable/"}) || r.Keys != nil || r.Priority != 1 {
		t.Errorf("stable, redefined by the user: %+v; want the user's definition alone", r)
	}
	if want := (Cache{MaxSize: 0, OlderThan: 24 * time.Hour}); got.Cache != want {
		t.Errorf("cache %+v, want %+v", got.Cache, want)
	}
	empty, err := Load(filepath.Join(dir, "none.toml"))
	if err != nil || len(empty.Repos) != 0 || empty.Cache != (Cache{}) {
		t.Errorf("Load of no file: %+v, %v", empty, err)
	}
}

// TestLoadKeepsKeys: a file read later that gives an earlier file's location (a user's
// entry adding a credential to the system's repository, its URL with user information or
// not, whatever its name) takes its place but never drops its keys: they are trusted
// besides its own, each said to come from its file. A name given another location gets
// none of the keys of the location it had.
func TestLoadKeepsKeys(t *testing.T) {
	dir := t.TempDir()
	system := write(t, filepath.Join(dir, "etc", "config.toml"), `
[repo.sys]
urls = ["http://host.example/"]
keys = ["`+keyA+`"]
[repo.stable]
urls = ["https://stable.example/"]
keys = ["`+keyA+`"]
`)
	user := write(t, filepath.Join(dir, "home", "config.toml"), `
[repo.ci]
urls = ["http://ci:s3cret@host.example/"]
[repo.stable]
urls = ["https://elsewhere.example/"]
`)
	root := write(t, filepath.Join(dir, "root", "config.toml"), `
[repo.ci]
urls = ["http://host.example/index.json"]
keys = ["`+keyB+`", "`+keyA+`"]
`)
	type keys struct{ keys, files []string }
	keysOf := func(r Repo) keys {
		k := keys{keys: r.Keys}
		for i := range r.Keys {
			k.files = append(k.files, r.KeyFile(i))
		}
		return k
	}
	for _, tc := range []struct {
		files []string
		want  map[string]keys
	}{
		{[]string{system, user}, map[string]keys{"ci": {[]string{keyA}, []string{system}}, "stable": {}}},
		{[]string{system, user, root}, map[string]keys{"ci": {[]string{keyB, keyA}, []string{root, root}}, "stable": {}}},
		{[]string{user, root}, map[string]keys{"ci": {[]string{keyB, keyA}, []string{root, root}}, "stable": {}}},
		{[]string{system, root}, map[string]keys{"ci": {[]string{keyB, keyA}, []string{root, root}}, "stable": {[]string{keyA}, []string{system}}}},
	} {
		c, err := Load(tc.files...)
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[string]keys)
		for _, r := range c.Repos {
			got[r.Name] = keysOf(r)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Load(%q): keys %+v, want %+v", tc.files, got, tc.want)
		}
	}
	c, err := Load(system, user)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Repos[0]; r.Name != "ci" || r.File != user || !reflect.DeepEqual(r.URLs, []string{"http://ci:s3cret@host.example/"}) {
		t.Errorf("the user's ci at the system's sys: %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		name, from, to string
		line, col      int
		key            string
		is             error // nil: any cause
	}{
		{"unknown key", "priority = 20", "prority = 20", 17, 1, "repo.team.prority", errUnknownKey},
		{"unknown table", "[cache]", "[caches]", 2, 2, "caches", errUnknownKey},
		{"type", "priority = 20", `priority = "high"`, 17, 12, "repo.team.priority", nil},
		{"string for a list", `urls = ["/srv/pkg/local"]`, `urls = "/srv/pkg/local"`, 20, 8, "repo.local.urls", nil},
		{"number for a duration", `"30d"`, `30`, 4, 14, "cache.older-than", nil},
		{"bad url scheme", "https://artifacts.example.com/team/", "ftp://artifacts.example.com/team/", 15, 9, "repo.team.urls", nil},
		{"relative path", `"/srv/pkg/local"`, `"srv/pkg/local"`, 20, 9, "repo.local.urls", nil},
		{"bad key", "team=" + keyB, "team=pkg-ed25519:AAAA", 16, 9, "repo.team.keys", trust.ErrKey},
		{"private key", "team=" + keyB, "pkg-ed25519-secret:AAAA", 16, 9, "repo.team.keys", trust.ErrPrivateKey},
		{"bad size", `"20GiB"`, `"20 gigs"`, 3, 12, "cache.max-size", nil},
		{"bad duration", `"30d"`, `"a month"`, 4, 14, "cache.older-than", nil},
		{"no urls", `urls = ["/srv/pkg/local"]`, `priority = 1`, 0, 0, "repo.local", nil},
		{"bad name", "[repo.local]", "[repo.Local]", 0, 0, "repo.Local", nil},
		{"syntax", "[repo.local]", "[repo.local", 19, 12, "", nil},
		{"two names for one location", `"/srv/pkg/local"`, `"https://artifacts.example.com/team"`, 20, 1, "repo.local.urls", nil},
		{"two names, the later first in the map", `"/srv/pkg/local"`, `"https://pkgs.example.com/stable/index.json"`, 20, 1, "repo.local.urls", nil},
	} {
		text := strings.Replace(example, tt.from, tt.to, 1)
		if text == example {
			t.Fatalf("%s: no %q in the example", tt.name, tt.from)
		}
		_, err := parse("f.toml", []byte(text), 0o600)
		var ce *fileError
		if !errors.As(err, &ce) || ce.File != "f.toml" || ce.Line != tt.line || ce.Col != tt.col || ce.Key != tt.key {
			t.Errorf("%s: %#v, want an *Error at f.toml:%d:%d key %q", tt.name, err, tt.line, tt.col, tt.key)
		} else if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.is)
		}
	}
}

// TestOneNameSays checks the refusal of two names for one location, a *LocationError: it
// names the location and both repositories, with the other's line, and, where one URL
// holds user information, that a credential does not make another repository.
func TestOneNameSays(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[repo.team]\nurls = [\"/tmp/h5/team\"]\n\n[repo]\naaa = { urls = [\"file:///tmp/h5/team/\"] }\n",
			`config f.toml:5:1: repo.aaa.urls: "file:///tmp/h5/team/" is the location of repo.team (line 2) too: one location is one repository, known by one name`},
		{"[repo.a]\nurls = [\"http://host/\"]\nkeys = [\"" + keyA + "\"]\n\n[repo.b]\nurls = [\"http://ci:s3cret@host/\"]\n",
			`config f.toml:6:1: repo.b.urls: "http://host/" is the location of repo.a (line 2) too, user information apart: one location is one repository, whatever credential its URL holds; a credential belongs in the repository's token, username and password settings or the netrc file (docs/config.md#credentials)`},
	} {
		_, err := parse("f.toml", []byte(tc.text), 0o600)
		le := (*LocationError)(nil)
		if err == nil || err.Error() != tc.want || !errors.As(err, &le) || le.Credential != strings.Contains(tc.text, "@") {
			t.Errorf("parse: %v\nwant %s", err, tc.want)
		}
	}
}

// TestErrorText checks how a *fileError names its place: file, line and column,
// and key.

func TestErrorText(t *testing.T) {
	for _, tt := range []struct {
		e    fileError
		want string
	}{
		{fileError{File: "f.toml", Line: 17, Col: 1, Key: "repo.team.prority", Err: errUnknownKey}, "config f.toml:17:1: repo.team.prority: unknown key"},
		{fileError{File: "f.toml", Key: "repo.local", Err: errors.New("no urls")}, "config f.toml: repo.local: no urls"},
		{fileError{File: "f.toml", Line: 19, Col: 12, Err: errors.New("toml: expected ']'")}, "config f.toml:19:12: toml: expected ']'"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestValueErrorsSay checks that a bad value is reported by pkg's own words
// naming the value, not by the TOML library's.
func TestValueErrorsSay(t *testing.T) {
	for _, tt := range []struct{ from, to, key, value string }{
		{"https://artifacts.example.com/team/", "ftp://artifacts.example.com/team/", "repo.team.urls", `"ftp://artifacts.example.com/team/"`},
		{`"/srv/pkg/local"`, `"srv/pkg/local"`, "repo.local.urls", `"srv/pkg/local"`},
		{"team=" + keyB, "team=pkg-ed25519:AAAA", "repo.team.keys", `"team=pkg-ed25519:AAAA"`},
		{`"20GiB"`, `"-1GiB"`, "cache.max-size", `"-1GiB"`},
		{`"30d"`, `"soon"`, "cache.older-than", `"soon"`},
		{`"/srv/pkg/local"`, `"/srv/pkg/local", "https://"`, "repo.local.urls", `"https://"`},
	} {
		_, err := parse("f.toml", []byte(strings.Replace(example, tt.from, tt.to, 1)), 0o600)
		var ce *fileError
		var de *toml.DecodeError
		if !errors.As(err, &ce) || ce.Key != tt.key || errors.As(err, &de) || !strings.Contains(ce.Err.Error(), tt.value) {
			t.Errorf("%s: %v, want an *Error of %s naming %s", tt.to, err, tt.key, tt.value)
		}
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "1KiB": 1024, "1.5GiB": 3 << 29, "500MB": 500e6, "2 TB": 2e12, "7B": 7} {
		var s size
		if err := s.UnmarshalText([]byte(in)); err != nil || s.n != want {
			t.Errorf("size %q = %d, %v; want %d", in, s.n, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "1 gig", "-1", "1e30TB", "NaN"} {
		var s size
		if err := s.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("size %q = %d, want an error", in, s.n)
		}
	}
}

func TestFiles(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, tt := range []struct {
		xdg, root string
		want      []string
	}{
		{"", "", []string{systemFile, "/home/u/.config/pkg/config.toml"}},
		{"/xdg", "/r", []string{systemFile, "/xdg/pkg/config.toml", "/r/.pkg/config.toml"}},
		{"relative", "", []string{systemFile, "/home/u/.config/pkg/config.toml"}},
	} {
		t.Setenv("XDG_CONFIG_HOME", tt.xdg)
		if got := Files(tt.root); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Files(%q) with XDG_CONFIG_HOME=%q: %q, want %q", tt.root, tt.xdg, got, tt.want)
		}
	}
}

// FuzzParse checks that Parse does not panic and that what it accepts is valid.
func FuzzParse(f *testing.F) {
	f.Add(example)
	f.Add("[repo.a]\nurls = [\"/x\"]\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parse("f.toml", []byte(text), 0o600)
		if err != nil {
			return
		}
		for _, r := range c.Repos {
			if len(r.URLs) == 0 || checkName(r.Name) != nil {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

// BenchmarkParse parses docs/config.md's example: both decodings and every check.
func BenchmarkParse(b *testing.B) {
	data := []byte(example)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse("config.toml", data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLocationErrorsHidePasswords checks that a refused URL is named without its user
// information: the error goes to the terminal and to logs.
func TestLocationErrorsHidePasswords(t *testing.T) {
	for _, bad := range []string{"https://alice:S3cret@/x", "ftp://alice:S3cret@h/x", "https://alice:S3%zzcret@h/x"} {
		_, err := parse("f.toml", []byte(strings.Replace(example, "https://artifacts.example.com/team/", bad, 1)), 0o600)
		var ce *fileError
		if !errors.As(err, &ce) || ce.Key != "repo.team.urls" || strings.Contains(err.Error(), "S3") {
			t.Errorf("%s: %v, want an *Error of repo.team.urls without the password", bad, err)
		}
	}
}
