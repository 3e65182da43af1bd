package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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
	got, err := Parse("config.toml", []byte(example))
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
// file's of its name, whole (its mirrors and keys are not mixed with an earlier file's),
// others are kept, each cache limit is the last one set (if to "0", no limit), and a
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
`)
	got, err := Load(system, filepath.Join(dir, "missing.toml"), user, root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got.Repos {
		names = append(names, r.Name+"@"+r.File)
	}
	if want := []string{"project@" + root, "stable@" + user, "distro@" + system}; !reflect.DeepEqual(names, want) {
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

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ name, from, to, want string }{
		{"unknown key", "priority = 20", "prority = 20", "config f.toml:17:1: repo.team.prority: unknown key"},
		{"unknown table", "[cache]", "[caches]", "config f.toml:2:2: caches: unknown key"},
		{"type", "priority = 20", `priority = "high"`, "config f.toml:17:12: repo.team.priority: want an integer"},
		{"string for a list", `urls = ["/srv/pkg/local"]`, `urls = "/srv/pkg/local"`, "config f.toml:20:8: repo.local.urls: want a list of strings"},
		{"number for a duration", `"30d"`, `30`, "config f.toml:4:14: cache.older-than: want a string such as \"30d\""},
		{"bad url scheme", "https://artifacts.example.com/team/", "ftp://artifacts.example.com/team/", `config f.toml:15:`},
		{"relative path", `"/srv/pkg/local"`, `"srv/pkg/local"`, `config f.toml:20:`},
		{"bad key", "team=" + keyB, "team=pkg-ed25519:AAAA", `config f.toml:16:`},
		{"private key", "team=" + keyB, "pkg-ed25519-secret:AAAA", `config f.toml:16:`},
		{"bad size", `"20GiB"`, `"20 gigs"`, "config f.toml:3:"},
		{"bad duration", `"30d"`, `"a month"`, "config f.toml:4:"},
		{"no urls", `urls = ["/srv/pkg/local"]`, `priority = 1`, "config f.toml: repo.local: no urls"},
		{"bad name", "[repo.local]", "[repo.Local]", `config f.toml: repo.Local: bad repository name "Local"`},
		{"syntax", "[repo.local]", "[repo.local", "config f.toml:19:"},
	} {
		text := strings.Replace(example, tt.from, tt.to, 1)
		if text == example {
			t.Fatalf("%s: no %q in the example", tt.name, tt.from)
		}
		_, err := Parse("f.toml", []byte(text))
		var ce *Error
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an *Error starting %q", tt.name, err, tt.want)
		}
	}
}

func TestValueErrorsSay(t *testing.T) {
	for _, tt := range []struct{ from, to, want string }{
		{"https://artifacts.example.com/team/", "ftp://artifacts.example.com/team/", `scheme "ftp" is not supported`},
		{`"/srv/pkg/local"`, `"srv/pkg/local"`, `"srv/pkg/local" is neither an http(s) or file URL nor an absolute path`},
		{"team=" + keyB, "team=pkg-ed25519:AAAA", "want pkg-ed25519: and the base64 of 32 bytes"},
		{`"20GiB"`, `"-1GiB"`, `config f.toml:3:12: cache.max-size: size "-1GiB" is negative`},
		{`"30d"`, `"soon"`, `config f.toml:4:14: cache.older-than: duration "soon": want 30d, 720h or the like`},
		{`"/srv/pkg/local"`, `"/srv/pkg/local", "https://"`, `config f.toml:20:27: repo.local.urls: URL "https://" has no host`},
	} {
		_, err := Parse("f.toml", []byte(strings.Replace(example, tt.from, tt.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), ": toml: ") {
			t.Errorf("%s: %v, want an error containing %q", tt.to, err, tt.want)
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
		{"", "", []string{SystemFile, "/home/u/.config/pkg/config.toml"}},
		{"/xdg", "/r", []string{SystemFile, "/xdg/pkg/config.toml", "/r/.pkg/config.toml"}},
		{"relative", "", []string{SystemFile, "/home/u/.config/pkg/config.toml"}},
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
		c, err := Parse("f.toml", []byte(text))
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
		if _, err := Parse("config.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}
