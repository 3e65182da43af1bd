package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
)

var at = time.Date(2026, 12, 2, 10, 0, 0, 0, time.FixedZone("x", 3600))

// TestJSON checks each type's JSON against the example of its document, and that the
// document names the schema the type carries.
func TestJSON(t *testing.T) {
	p := &db.Record{Name: "app", Version: "1.0", SHA256: "ab", Depends: testrepo.Requires("lib>=1,<2"), Bin: testrepo.Commands("bin/app"),
		Installed: at, Files: 2, Size: 10}
	beside := []repo.Outdated{{Name: "debug", Kind: repo.KindNPM, Installed: "3.2.7", Allowed: "3.2.7", Newest: "4.4.3", Beside: "4.4.3"},
		{Name: "ms", Kind: repo.KindNPM, Installed: "2.0.0", Allowed: "2.1.3", Newest: "2.1.3"}}
	tests := []struct {
		doc  string
		v    any
		want string
	}{
		{"list", NewList([]db.Record{*p}, map[string]repo.Requirement{"app": {Name: "app"}}),
			`{"schema":"pkg.list/1","packages":[{"name":"app","version":"1.0","requested":true,"files":2,"size":10,"installed_at":"2026-12-02T09:00:00Z"}]}`},
		{"list", NewList(nil, nil), `{"schema":"pkg.list/1","packages":[]}`},
		{"info", InstalledInfo(p, "/r/pkgs/app", "app>=1", true),
			`{"schema":"pkg.info/1","name":"app","version":"1.0","depends":["lib>=1,<2"],"bin":["bin/app"],"installed":true,"requested":"app>=1","held":true,"installed_at":"2026-12-02T09:00:00Z","directory":"/r/pkgs/app","files":2,"size":10,"sha256":"ab"}`},
		{"info", OfferedInfo(repo.Package{Name: "lib", Version: "2", Size: 99, SHA256: "cd", Summary: "a lib"}, []string{"2", "1"}),
			`{"schema":"pkg.info/1","name":"lib","version":"2","summary":"a lib","installed":false,"files":0,"size":0,"archive_size":99,"sha256":"cd","versions":["2","1"]}`},
		{"info", InstalledInfo(&db.Record{Name: "semver", Version: "7.5.4", Kind: repo.KindNPM, SHA256: "ef", Into: "lib/node_modules/semver", Installed: at}, "/r/pkgs/semver@7.5.4", "", false),
			`{"schema":"pkg.info/1","name":"semver","version":"7.5.4","kind":"npm","into":"lib/node_modules/semver","installed":true,"installed_at":"2026-12-02T09:00:00Z","directory":"/r/pkgs/semver@7.5.4","files":0,"size":0,"sha256":"ef"}`},
		{"info", OfferedInfo(repo.Package{Name: "semver", Version: "7.5.4", Kind: repo.KindNPM, SHA256: "ef"}, []string{"7.5.4"}),
			`{"schema":"pkg.info/1","name":"semver","version":"7.5.4","kind":"npm","installed":false,"files":0,"size":0,"sha256":"ef","versions":["7.5.4"]}`},
		{"search", NewSearch("a", []repo.Package{{Name: "app", Version: "2"}, {Name: "bar", Version: "1", Summary: "b"}}, []db.Record{*p}),
			`{"schema":"pkg.search/1","query":"a","packages":[{"name":"app","version":"2","installed":"1.0"},{"name":"bar","version":"1","summary":"b"}]}`},
		{"files", NewFiles(p, []db.File{{Path: "bin", Type: '5', Mode: fs.ModeDir | 0o755}, {Path: "bin/app", Type: '0', Mode: 0o755, Size: 10, SHA256: [32]byte{1}},
			{Path: "bin/a", Type: '2', Mode: fs.ModeSymlink | 0o777, SHA256: [32]byte{2}}, {Path: "bin/h", Type: '1', Mode: 0o644, SHA256: [32]byte{1}}}),
			`{"schema":"pkg.files/1","name":"app","version":"1.0","files":[{"path":"bin","in_root":"bin","type":"dir","mode":"0755"},{"path":"bin/app","in_root":"bin/app","type":"file","mode":"0755","size":10,"sha256":"0100000000000000000000000000000000000000000000000000000000000000"},{"path":"bin/a","in_root":"bin/a","type":"symlink","mode":"0777","sha256":"0200000000000000000000000000000000000000000000000000000000000000"},{"path":"bin/h","in_root":"bin/h","type":"hardlink","mode":"0644","sha256":"0100000000000000000000000000000000000000000000000000000000000000"}]}`},
		{"outdated", NewOutdated([]repo.Outdated{{Name: "lib", Installed: "1", Allowed: "1.5", Newest: "2"}, {Name: "x", Installed: "1", Allowed: "1", Newest: "2", Held: "x=1"}}, false),
			`{"schema":"pkg.outdated/2","packages":[{"name":"lib","installed":"1","allowed":"1.5","newest":"2"},{"name":"x","installed":"1","allowed":"1","newest":"2","held_by":"x=1"}],"omitted":0}`},
		{"outdated", NewOutdated(nil, false), `{"schema":"pkg.outdated/2","packages":[],"omitted":0}`},
		// An npm instance its dependents keep beside a newer one of its name is counted
		// alone, but with all.
		{"outdated", NewOutdated(beside, false),
			`{"schema":"pkg.outdated/2","packages":[{"name":"ms","kind":"npm","installed":"2.0.0","allowed":"2.1.3","newest":"2.1.3"}],"omitted":1}`},
		{"outdated", NewOutdated(beside, true),
			`{"schema":"pkg.outdated/2","packages":[{"name":"debug","kind":"npm","installed":"3.2.7","allowed":"3.2.7","newest":"4.4.3","beside":"4.4.3"},{"name":"ms","kind":"npm","installed":"2.0.0","allowed":"2.1.3","newest":"2.1.3"}],"omitted":0}`},
		{"why", NewWhy(p, "", []string{"top"}, [][]string{{"top", "app"}}),
			`{"schema":"pkg.why/1","name":"app","version":"1.0","needed_by":["top"],"chains":[["top","app"]]}`},
		{"why", NewWhy(p, "app", nil, nil), `{"schema":"pkg.why/1","name":"app","version":"1.0","requested":"app","needed_by":[],"chains":[]}`},
		{"verify", newVerify(1, 2, []install.FileError{{Package: "app", Version: "1.0", Path: "bin/app", Err: fmt.Errorf("%w (%w)", install.ErrModified, install.ErrContent)}}),
			`{"schema":"pkg.verify/1","packages":1,"files":2,"problems":[{"package":"app","version":"1.0","path":"bin/app","kind":"modified","what":"content"}]}`},
		{"verify", newVerify(1, 2, []install.FileError{{Package: "app", Version: "1.0", Path: "bin/app", Entry: "abc", Err: fmt.Errorf("%w (%w)", install.ErrCacheDamaged, install.ErrContent)}}),
			`{"schema":"pkg.verify/1","packages":1,"files":2,"problems":[{"package":"app","version":"1.0","path":"bin/app","kind":"damaged","what":"content","entry":"abc"}]}`},
		{"verify", newVerify(0, 0, nil), `{"schema":"pkg.verify/1","packages":0,"files":0,"problems":[]}`},
		// A dependency nothing installed meets is no path: a reader of path and kind
		// missing as a file finds none, and the requirement is a field of its own.
		{"verify", newVerify(1, 2, []install.FileError{{Package: "app", Version: "1.0", Requirement: "lib>=1", Err: fmt.Errorf("%w (%w)", install.ErrMissing, install.ErrDependency)}}),
			`{"schema":"pkg.verify/1","packages":1,"files":2,"problems":[{"package":"app","version":"1.0","path":"","requirement":"lib>=1","kind":"missing","what":"dependency"}]}`},
		{"repos", NewRepos([]Repository{{Name: "team", URLs: []string{"https://a/team/", "https://b/team/"}, Keys: []string{"pkg-ed25519:k"}, Priority: 20, From: "/etc/pkg/config.toml"}, {Name: "x", URLs: []string{"file:///srv/x/"}, From: "--repo"}}),
			`{"schema":"pkg.repos/1","repos":[{"name":"team","urls":["https://a/team/","https://b/team/"],"keys":["pkg-ed25519:k"],"keys_from":["/etc/pkg/config.toml"],"priority":20,"from":"/etc/pkg/config.toml"},{"name":"x","urls":["file:///srv/x/"],"keys":[],"keys_from":[],"priority":0,"from":"--repo"}]}`},
		{"repos", NewRepos(nil), `{"schema":"pkg.repos/1","repos":[]}`},
	}
	for _, tt := range tests {
		var b strings.Builder
		err := Write(&b, tt.v)
		var compact bytes.Buffer
		if err == nil {
			err = json.Compact(&compact, []byte(b.String()))
		}
		if got := compact.String(); err != nil || got != tt.want {
			t.Errorf("%s: %s, %v\nwant %s", tt.doc, compact.String(), err, tt.want)
		}
		doc, err := os.ReadFile(filepath.Join("..", "docs", "json", tt.doc+".md"))
		if err != nil {
			t.Fatal(err)
		}
		schema := "pkg." + tt.doc + "/1"
		if !strings.Contains(string(doc), "`"+schema+"`") {
			t.Errorf("docs/json/%s.md does not name %s", tt.doc, schema)
		}
	}
}

// TestDocumentedFields checks that each field of each type is in its document's table.
func TestDocumentedFields(t *testing.T) {
	for doc, v := range map[string][]any{
		"list": {List{}, Installed{}}, "info": {Info{}}, "search": {Search{}, Found{}}, "files": {Files{}, File{}},
		"outdated": {Outdated{}, OutdatedEntry{}}, "why": {Why{}}, "verify": {Verify{}, Problem{}}, "repos": {Repos{}, Repository{}},
	} {
		text, err := os.ReadFile(filepath.Join("..", "docs", "json", doc+".md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			for _, name := range jsonNames(x) {
				if !regexp.MustCompile("(?m)^\\| `" + name + "` \\|").Match(text) {
					t.Errorf("docs/json/%s.md has no row for %q (%T)", doc, name, x)
				}
			}
		}
	}
}

// jsonNames returns the JSON names of the fields of struct v.
func jsonNames(v any) []string {
	var names []string
	rt := reflect.TypeOf(v)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}
