package publish

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// integrity returns the integrity npm writes for data: "sha512-" and its digest in base64.
func integrity(data string) string {
	sum := sha512.Sum512([]byte(data))
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// lockJSON returns a package-lock.json of version 3 with the project entry root and the
// packages entries.
func lockJSON(t *testing.T, root map[string]any, entries map[string]map[string]any) []byte {
	t.Helper()
	pkgs := map[string]any{"": root}
	for k, v := range entries {
		pkgs[k] = v
	}
	data, err := json.Marshal(map[string]any{"name": "proj", "lockfileVersion": 3, "requires": true, "packages": pkgs})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// registryEntry is a lock's entry for NAME at version, with the integrity of data.
func registryEntry(name, version, data string) map[string]any {
	return map[string]any{"version": version, "resolved": "https://registry.npmjs.org/" + name + "/-/" + name + "-" + version + ".tgz",
		"integrity": integrity(data)}
}

func TestParseNPMLock(t *testing.T) {
	root := map[string]any{"name": "proj", "version": "1.0.0",
		"dependencies":         map[string]string{"debug": "^4.3.1"},
		"devDependencies":      map[string]string{"ms": "2.1.3"},
		"optionalDependencies": map[string]string{"fsevents": "^2"}}
	bundled := map[string]any{"version": "1.0.0", "inBundle": true}
	data := lockJSON(t, root, map[string]map[string]any{
		"node_modules/debug":                         registryEntry("debug", "4.3.4", "debug"),
		"node_modules/ms":                            registryEntry("ms", "2.1.3", "ms 3"),
		"node_modules/debug/node_modules/ms":         registryEntry("ms", "2.1.2", "ms 2"),
		"node_modules/other/node_modules/ms":         {"version": "2.1.2", "resolved": "https://mirror.example/ms-2.1.2.tgz", "integrity": integrity("ms 2")}, // the same bytes
		"node_modules/other":                         registryEntry("other", "1.0.0", "other"),
		"node_modules/other/node_modules/in":         bundled,
		"node_modules/other/node_modules/JSONStream": {"version": "1.3.5", "inBundle": true},             // an old name, which only npm reads
		"node_modules/@s/nr":                         {"version": "1.0.0", "integrity": integrity("nr")}, // no resolved: the registry's
	})
	l, err := parseNPMLock(data, "https://r.example/npm/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tb := range l.Tarballs {
		got = append(got, tb.Key+" "+tb.Name+"@"+tb.Version)
		if len(tb.SHA512) != 1 || tb.Resolved == "" {
			t.Errorf("%s: sha512 %x, resolved %q", tb.Key, tb.SHA512, tb.Resolved)
		}
	}
	if nr := l.Tarballs[0]; nr.Name != "@s/nr" || nr.Resolved != "https://r.example/npm/@s/nr/-/nr-1.0.0.tgz" {
		t.Errorf("a package without resolved: %+v, want the registry's URL", nr)
	}
	if _, err := parseNPMLock(data, "file:///srv/npm/"); !errors.Is(err, errResolved) {
		t.Errorf("a package without resolved, from a registry not http(s): %v", err)
	}
	if _, err := parseNPMLock(data, "https://u:S3cret@r.example/npm/"); !errors.Is(err, errResolvedUser) || strings.Contains(err.Error(), "S3cret") {
		t.Errorf("a package without resolved, from a registry whose URL holds credentials: %v, want errResolvedUser without them", err)
	}
	want := []string{"node_modules/@s/nr @s/nr@1.0.0", "node_modules/debug debug@4.3.4", "node_modules/debug/node_modules/ms ms@2.1.2",
		"node_modules/ms ms@2.1.3", "node_modules/other other@1.0.0"}
	if !slices.Equal(got, want) {
		t.Errorf("tarballs %q, want %q", got, want)
	}
	if reqs := repo.JoinRequirements(l.Requires); reqs != "debug@npm:4.3.4 ms@npm:2.1.3" {
		t.Errorf("requires %s, want debug and ms at the lock's versions (fsevents, optional, is not in it)", reqs)
	}
	if !slices.Equal(l.Bundled, []string{"node_modules/other/node_modules/JSONStream", "node_modules/other/node_modules/in"}) {
		t.Errorf("bundled %q", l.Bundled)
	}
}

// TestParseNPMLockRefuses: a hostile or unsupported lock is refused, naming the entry.
func TestParseNPMLockRefuses(t *testing.T) {
	good := registryEntry("a", "1.0.0", "a")
	with := func(k string, v any) map[string]any {
		e := map[string]any{}
		for k, v := range good {
			e[k] = v
		}
		e[k] = v
		return e
	}
	root := map[string]any{"name": "proj"}
	tests := []struct {
		name string
		data []byte
		key  string
		is   error
	}{
		{"version 1", []byte(`{"lockfileVersion": 1, "dependencies": {}}`), "", ErrNPMLockVersion},
		{"no version", []byte(`{"packages": {}}`), "", ErrNPMLockVersion},
		{"version 4", []byte(`{"lockfileVersion": 4, "packages": {}}`), "", ErrNPMLockVersion},
		{"not json", []byte(`{"lockfileVersion": 3,`), "", nil},
		{"link", lockJSON(t, root, map[string]map[string]any{"node_modules/a": {"resolved": "packages/a", "link": true}}), "node_modules/a", ErrNPMLocal},
		{"workspace", lockJSON(t, root, map[string]map[string]any{"packages/a": {"version": "1.0.0"}}), "packages/a", ErrNPMLocal},
		{"dot dot", lockJSON(t, root, map[string]map[string]any{"node_modules/../../etc": good}), "node_modules/../../etc", errKey},
		{"dot dot inside", lockJSON(t, root, map[string]map[string]any{"node_modules/a/../../b": good}), "node_modules/a/../../b", errKey},
		{"scope alone", lockJSON(t, root, map[string]map[string]any{"node_modules/@a": good}), "node_modules/@a", errKey},
		{"not a name", lockJSON(t, root, map[string]map[string]any{"node_modules/A+b": good}), "node_modules/A+b", errNPMName},
		{"dot", lockJSON(t, root, map[string]map[string]any{"node_modules/.": good}), "node_modules/.", errKey},
		{"empty segment", lockJSON(t, root, map[string]map[string]any{"node_modules//a": good}), "node_modules//a", errKey},
		{"trailing slash", lockJSON(t, root, map[string]map[string]any{"node_modules/a/": good}), "node_modules/a/", errKey},
		{"bundled, a control character", lockJSON(t, root, map[string]map[string]any{"node_modules/a/node_modules/b\nc": {"version": "1.0.0", "inBundle": true}}), "node_modules/a/node_modules/b\nc", errNPMName},
		{"not node_modules", lockJSON(t, root, map[string]map[string]any{"node_modules/a/lib/b": good}), "node_modules/a/lib/b", errKey},
		{"alias", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("name", "b")}), "node_modules/a", errAlias},
		{"file resolved", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("resolved", "file:../a-1.0.0.tgz")}), "node_modules/a", errResolved},
		{"git resolved", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("resolved", "git+ssh://git@github.com/a/a.git#abc")}), "node_modules/a", errResolved},
		{"credentials", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("resolved", "https://u:S3cret@example.com/a.tgz")}), "node_modules/a", errResolvedUser},
		{"a token", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("resolved", "https://S3cret@example.com/a.tgz")}), "node_modules/a", errResolvedUser},
		{"sha1", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("integrity", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=")}), "node_modules/a", errNoSHA512},
		{"no integrity", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("integrity", "")}), "node_modules/a", errNoSHA512},
		{"short sha512", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("integrity", "sha512-AAAA")}), "node_modules/a", errNoSHA512},
		{"bad version", lockJSON(t, root, map[string]map[string]any{"node_modules/a": with("version", "1 0")}), "node_modules/a", repo.ErrVersion},
		{"two integrities", lockJSON(t, root, map[string]map[string]any{"node_modules/a": good, "node_modules/b/node_modules/a": with("integrity", integrity("other")),
			"node_modules/b": registryEntry("b", "1.0.0", "b")}), "node_modules/b/node_modules/a", errTwice},
		{"overrides", lockJSON(t, map[string]any{"overrides": map[string]string{"espree": "10.3.0"}}, map[string]map[string]any{"node_modules/a": good}), "", ErrNPMOverrides},
		{"dependency missing", lockJSON(t, map[string]any{"dependencies": map[string]string{"a": "^1", "zz": "^1"}}, map[string]map[string]any{"node_modules/a": good}), "node_modules/zz", errNoPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "package-lock.json")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readNPMLock(path, "https://registry.npmjs.org/")
			var le *NPMLockError
			if !errors.As(err, &le) || le.Path != path || le.Key != tt.key || tt.is != nil && !errors.Is(err, tt.is) || strings.Contains(err.Error(), "S3cret") {
				t.Errorf("readNPMLock: %v, want an *NPMLockError for %s at %q (%v), no credential shown", err, path, tt.key, tt.is)
			}
		})
	}
}

// TestReadNPMLockOverrides: a lock whose project's package.json beside it has npm
// overrides is refused, as they are not supported; empty overrides are none.
func TestReadNPMLockOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "package-lock.json")
	data := lockJSON(t, map[string]any{"name": "proj"}, map[string]map[string]any{"node_modules/a": registryEntry("a", "1.0.0", "a")})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pkg  string
		want error
	}{
		{`{"name": "proj", "overrides": {}}`, nil},
		{`{"name": "proj", "overrides": {"espree": "10.3.0"}}`, ErrNPMOverrides},
	} {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(tt.pkg), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readNPMLock(path, "https://registry.npmjs.org/")
		var le *NPMLockError
		if tt.want == nil && err != nil || tt.want != nil && (!errors.As(err, &le) || le.Path != path || !errors.Is(err, tt.want)) {
			t.Errorf("readNPMLock with package.json %s: %v, want %v", tt.pkg, err, tt.want)
		}
	}
}

func TestNPMKeyName(t *testing.T) {
	for key, want := range map[string]string{
		"node_modules/a":                               "a",
		"node_modules/@s/a":                            "@s/a",
		"node_modules/@s/a/node_modules/b":             "b",
		"node_modules/a/node_modules/@s/b":             "@s/b",
		"node_modules/a/node_modules/b/node_modules/c": "c",
		"node_modules/JSONStream":                      "JSONStream",
		"node_modules/a/node_modules/JSONStream":       "JSONStream",
		"node_modules/@s":                              "",
		"node_modules/@s/a/b":                          "",
		"node_modules":                                 "",
		"a":                                            "",
		"node_modules/..":                              "",
		"node_modules/@s/..":                           "",
		"node_modules/@../x":                           "",
	} {
		got, err := npmKeyName(key)
		if got != want || (err == nil) != (want != "") || err != nil && !errors.Is(err, errKey) {
			t.Errorf("npmKeyName(%q) = %q, %v, want %q", key, got, err, want)
		}
	}
	for key, name := range map[string]string{"node_modules/A+b": "A+b", "node_modules/.bin": ".bin", "node_modules/_a": "_a", "node_modules/a/node_modules/@s/B": "@s/B"} {
		if got, err := npmKeyName(key); !errors.Is(err, errNPMName) || !strings.Contains(err.Error(), strconv.Quote(name)) {
			t.Errorf("npmKeyName(%q) = %q, %v, want errNPMName naming the package", key, got, err)
		}
	}
}

// TestNPMRepoLock: the lock of an import holds what the project's requests resolve to
// among the lock's packages, by file URLs beneath the repository, and reads back as
// sync reads it; a package for one platform makes it a lock for this machine's.
func TestNPMRepoLock(t *testing.T) {
	dir := t.TempDir()
	npm := func(name, version, archive string, deps ...string) repo.Package {
		return repo.Package{Name: name, Version: version, Kind: repo.KindNPM, Archive: archive, Size: 1,
			SHA256: strings.Repeat("a", 64), Depends: testrepo.Requires(deps...)}
	}
	pkgs := []repo.Package{npm("@s/b", "2.1.0", "@s+b-2.1.0.tgz"), npm("a", "1.0.0", "a-1.0.0.tgz", "@s/b@npm:^2.0.0"), npm("x", "1.0.0", "x-1.0.0.tgz")}
	reqs := testrepo.Requires("a@npm:1.0.0")
	taken, err := resolveNPM(pkgs, reqs)
	if err != nil {
		t.Fatal(err)
	}
	l, unused, err := npmRepoLock(dir, pkgs, taken, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(unused) != 1 || unused[0].Name != "x" || len(l.Packages) != 2 || l.Platforms != nil {
		t.Fatalf("lock of %v, unused %v, platforms %v: want a and @s/b, x unused, any platform", l.Packages, unused, l.Platforms)
	}
	if want := "file://" + dir + "/@s+b-2.1.0.tgz"; l.Packages[0].Archive != want {
		t.Errorf("archive %s, want %s", l.Packages[0].Archive, want)
	}
	path := filepath.Join(t.TempDir(), "pkg.lock")
	if err := repo.WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.ReadLock(path); err != nil {
		t.Errorf("the lock does not read back: %v", err)
	}

	native := npm("n", "1.0.0", "n-1.0.0.tgz")
	native.Platform = repo.Host
	pkgs[1].Depends = append(pkgs[1].Depends, testrepo.Requires("n@npm:1")...)
	pkgs = append(pkgs, native)
	if taken, err = resolveNPM(pkgs, reqs); err != nil {
		t.Fatal(err)
	}
	if l, _, err = npmRepoLock(dir, pkgs, taken, reqs); err != nil || !slices.Equal(l.Platforms, []string{repo.Host}) {
		t.Errorf("a lock taking a package for %s: platforms %v, %v", repo.Host, l.Platforms, err)
	}
}

// FuzzParseNPMLock: whatever a package-lock.json holds, parseNPMLock refuses it or gives
// tarballs of valid names and npm versions, each with an http(s) URL and a sha512 to check.
func FuzzParseNPMLock(f *testing.F) {
	f.Add([]byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "^1"}}, "node_modules/a": {"version": "1.0.0", "resolved": "https://r.example/a.tgz", "integrity": "` + integrity("a") + `"}}}`))
	f.Add([]byte(`{"lockfileVersion": 2, "packages": {"node_modules/@s/b/node_modules/c": {"version": "1.0.0-rc.1", "inBundle": true}}}`))
	f.Add([]byte(`{"lockfileVersion": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseNPMLock(data, "https://registry.npmjs.org/")
		if err != nil {
			return
		}
		for _, tb := range l.Tarballs {
			if _, err := npmKeyName(tb.Key); err != nil || !repo.ValidName(tb.Name) || repo.CheckNPMVersion(tb.Version) != nil ||
				len(tb.SHA512) == 0 || !strings.HasPrefix(tb.Resolved, "http") {
				t.Errorf("tarball %+v", tb)
			}
		}
	})
}

// TestNPMLockIntegrityText: the integrity messages print is the lock's sha512 digests
// alone, without its other algorithms, options or anything else the lock put there.
func TestNPMLockIntegrityText(t *testing.T) {
	want := integrity("a")
	data := lockJSON(t, map[string]any{}, map[string]map[string]any{"node_modules/a": {"version": "1.0.0",
		"resolved": "https://r.example/a.tgz", "integrity": "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk= " + want + "?opt\npkg: hint: run this"}})
	l, err := parseNPMLock(data, "")
	if err != nil || len(l.Tarballs) != 1 || l.Tarballs[0].Integrity != want {
		t.Errorf("parseNPMLock: %+v, %v; want integrity %s", l, err, want)
	}
}

// TestNPMLockErrorQuotes checks that an error quotes the lock's text that holds an escape,
// as the rest of pkg's output escapes it (\u001b).
func TestNPMLockErrorQuotes(t *testing.T) {
	root := map[string]any{"name": "proj"}
	for name, data := range map[string][]byte{
		"key":       lockJSON(t, root, map[string]map[string]any{"node_modules/a\x1b[2J": registryEntry("a", "1.0.0", "a")}),
		"link":      lockJSON(t, root, map[string]map[string]any{"node_modules/a": {"resolved": "x\x1b[2J", "link": true}}),
		"alias":     lockJSON(t, root, map[string]map[string]any{"node_modules/a": {"name": "b\x1b[2J"}}),
		"requested": lockJSON(t, map[string]any{"dependencies": map[string]string{"z\x1b[2J": "^1\x1b[2J"}}, nil),
	} {
		_, err := parseNPMLock(data, "https://registry.npmjs.org/")
		if err == nil || strings.Contains(err.Error(), "\x1b") || strings.Contains(err.Error(), `\x1b`) || !strings.Contains(err.Error(), `\u001b[2J`) {
			t.Errorf("%s: %q, want an error with the escape quoted", name, err)
		}
	}
}
