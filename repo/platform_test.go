package repo

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCheckPlatform(t *testing.T) {
	for _, tt := range []struct{ in, err, near string }{
		{"linux-amd64", "", ""},
		{"linux-arm64", "", ""},
		{"darwin-arm64", "", ""},
		{"linux-x86_64", "bad", "linux-amd64"},
		{"linux-aarch64", "bad", "linux-arm64"},
		{"linux", "bad", ""},
		{"Linux-amd64", "bad", ""},
		{"linux-amd64-v3", "bad", ""},
		{"", "bad", ""},
	} {
		err := CheckPlatform(tt.in)
		var be *badPlatformError
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("CheckPlatform(%q): %v", tt.in, err)
		case tt.err != "" && (!errors.As(err, &be) || be.Platform != tt.in || be.Near != tt.near):
			t.Errorf("CheckPlatform(%q): %#v, want a *badPlatformError meaning %q", tt.in, err, tt.near)
		}
	}
}

// multiIndex is a repository for two platforms: hello built for each, a library for any,
// and jq for arm64 alone.
var multiIndex = `{"format": 1, "packages": [
  {"name": "hello", "version": "1.0", "archive": "hello-1.0-linux-amd64.tar", "sha256": "` + testSum + `", "depends": ["libgreet"], "platform": "linux-amd64"},
  {"name": "hello", "version": "1.0", "archive": "hello-1.0-linux-arm64.tar", "sha256": "` + testSum + `", "depends": ["libgreet"], "platform": "linux-arm64"},
  {"name": "hello", "version": "1.1", "archive": "hello-1.1-linux-arm64.tar", "sha256": "` + testSum + `", "platform": "linux-arm64"},
  {"name": "jq", "version": "1.7", "archive": "jq-1.7-linux-arm64.tar", "sha256": "` + testSum + `", "platform": "linux-arm64"},
  {"name": "libgreet", "version": "2.0", "archive": "libgreet-2.0.tar", "sha256": "` + testSum + `"}
]}`

func TestParsePlatforms(t *testing.T) {
	ix, err := Parse([]byte(multiIndex))
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Packages[1].Platform; got != "linux-arm64" {
		t.Errorf("platform of hello 1.0's second entry: %q", got)
	}
	_, err = Parse([]byte(strings.Replace(multiIndex, `"platform": "linux-arm64"}`, `"platform": "linux-aarch64"}`, 1)))
	if be := (*badPlatformError)(nil); !errors.Is(err, ErrIndex) || !errors.As(err, &be) || be.Platform != "linux-aarch64" || !strings.Contains(err.Error(), "package hello@1.0: ") {
		t.Errorf("bad platform: Parse: %v, want a *badPlatformError of hello@1.0", err)
	}
	_, err = Parse([]byte(strings.Replace(multiIndex, `"platform": "linux-arm64"}`, `"platform": "linux-amd64"}`, 1)))
	if !errors.Is(err, ErrIndex) || !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "package hello@1.0 for linux-amd64") {
		t.Errorf("twice for one platform: Parse: %v, want hello@1.0 for linux-amd64 named", err)
	}
}

func TestResolvePlatform(t *testing.T) {
	ix, err := Parse([]byte(multiIndex))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ platform, req, want string }{
		{"linux-amd64", "hello", "libgreet-2.0.tar hello-1.0-linux-amd64.tar"},
		{"linux-arm64", "hello", "hello-1.1-linux-arm64.tar"},
		{"linux-arm64", "hello<1.1", "libgreet-2.0.tar hello-1.0-linux-arm64.tar"},
		{"linux-riscv64", "libgreet", "libgreet-2.0.tar"},
	} {
		pkgs, err := ix.ForPlatform(tt.platform).Resolve(parseReqs(t, tt.req))
		if err != nil {
			t.Errorf("%s %s: %v", tt.platform, tt.req, err)
			continue
		}
		var got []string
		for _, p := range pkgs {
			got = append(got, p.Archive)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s %s: got %q, want %s", tt.platform, tt.req, got, tt.want)
		}
	}
}

func TestResolveRefusesOtherPlatform(t *testing.T) {
	ix, err := Parse([]byte(multiIndex))
	if err != nil {
		t.Fatal(err)
	}
	withDep := *ix
	withDep.Packages = append(withDep.Packages, Package{Name: "tools", Version: "1", Archive: "tools-1.tar", SHA256: testSum, Depends: deps("jq")})
	for _, tt := range []struct {
		ix       *Index
		platform string
		req      string
		want     platformError
	}{
		{ix, "linux-amd64", "jq", platformError{Name: "jq", Version: "1.7", Offered: []string{"linux-arm64"}, Platform: "linux-amd64"}},
		{ix, "linux-riscv64", "hello", platformError{Name: "hello", Version: "1.1", Offered: []string{"linux-amd64", "linux-arm64"}, Platform: "linux-riscv64"}},
		{&withDep, "linux-amd64", "tools", platformError{Name: "jq", Version: "1.7", Offered: []string{"linux-arm64"}, Platform: "linux-amd64"}},
	} {
		for _, resolve := range []func() error{
			func() error { _, err := tt.ix.ForPlatform(tt.platform).Resolve(parseReqs(t, tt.req)); return err },
			func() error { _, err := tt.ix.ForPlatform(tt.platform).Lookup(parseReqs(t, tt.req)[0]); return err },
		} {
			err := resolve()
			var pe *platformError
			if !errors.As(err, &pe) || !reflect.DeepEqual(*pe, tt.want) {
				t.Errorf("%s %s: %#v, want a *platformError %+v", tt.platform, tt.req, err, tt.want)
			}
			if tt.ix == &withDep {
				if !strings.HasSuffix(err.Error(), " (required by tools 1)") {
					t.Errorf("%s %s: %v does not name the package that requires it", tt.platform, tt.req, err)
				}
				break // Lookup does not follow dependencies
			}
		}
	}
	here := &platformError{Name: "jq", Version: "1.7", Offered: []string{"linux-arm64"}, Platform: Host}
	if want := "jq 1.7 is offered for linux-arm64 only; this machine is " + Host; here.Error() != want {
		t.Errorf("on the host: %q, want %q", here.Error(), want)
	}
}

func TestAddPlatforms(t *testing.T) {
	dir := t.TempDir()
	for _, platform := range []string{"linux-arm64", "linux-amd64"} {
		_, err := addUnsigned(dir, writeArchive(t, "hello.tar.gz", "built for "+platform), Package{Name: "hello", Version: "1.0", Platform: platform})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := addUnsigned(dir, writeArchive(t, "doc.tar", "any"), Package{Name: "doc", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	checkDir(t, dir, "index.json", "doc-1.tar", "hello-1.0-linux-amd64.tar.gz", "hello-1.0-linux-arm64.tar.gz")
	ix := readIndexFile(t, dir)
	var got []string
	for _, p := range ix.Packages {
		got = append(got, p.what()+" "+p.Archive)
	}
	want := []string{"doc@1 doc-1.tar", "hello@1.0 for linux-amd64 hello-1.0-linux-amd64.tar.gz", "hello@1.0 for linux-arm64 hello-1.0-linux-arm64.tar.gz"}
	if ix.Format != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("index format %d, entries %q; want format 1, %q", ix.Format, got, want)
	}
	var be *badPlatformError
	if _, err := addUnsigned(dir, writeArchive(t, "x.tar", "x"), Package{Name: "x", Version: "1", Platform: "linux-x86_64"}); !errors.As(err, &be) || be.Near != "linux-amd64" {
		t.Errorf("Add for linux-x86_64: %v, want an error suggesting linux-amd64", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x-1-linux-x86_64.tar")); err == nil {
		t.Error("Add for a bad platform copied the archive")
	}
}

// platformLock locks reqs for two platforms against multiIndex.
func platformLock(t testing.TB, reqs ...string) *Lock {
	t.Helper()
	ix, err := Parse([]byte(multiIndex))
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]Requirement, len(reqs))
	for i, s := range reqs {
		if rs[i], err = ParseRequirement(s); err != nil {
			t.Fatal(err)
		}
	}
	by := make(map[string][]Package)
	for _, platform := range []string{"linux-arm64", "linux-amd64"} {
		pkgs, err := ix.ForPlatform(platform).Resolve(rs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pkgs {
			pkgs[i].Archive = testRepoURL + pkgs[i].Archive
		}
		by[platform] = pkgs
	}
	return NewLockFor(testRepoURL, rs, by)
}

func TestLockPlatforms(t *testing.T) {
	l := platformLock(t, "hello", "libgreet")
	text := encodeLock(t, l)
	for _, want := range []string{
		`"lockfile": 1,`,
		`"platforms": ["linux-amd64","linux-arm64"],`,
		`{"name":"hello","version":"1.0","url":"https://example.com/repo/hello-1.0-linux-amd64.tar","size":0,"sha256":"` + testSum + `","depends":["libgreet"],"platform":"linux-amd64"},`,
		`{"name":"hello","version":"1.1","url":"https://example.com/repo/hello-1.1-linux-arm64.tar","size":0,"sha256":"` + testSum + `","platform":"linux-arm64"},`,
		`{"name":"libgreet","version":"2.0","url":"https://example.com/repo/libgreet-2.0.tar","size":0,"sha256":"` + testSum + `"}` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lockfile lacks %s:\n%s", want, text)
		}
	}
	back, err := decodeLock([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withoutOrders(back), l) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", back, l)
	}
	for platform, want := range map[string]string{
		"linux-amd64": "libgreet 2.0, hello 1.0",
		"linux-arm64": "hello 1.1, libgreet 2.0",
	} {
		pkgs, err := back.orderFor(platform)
		if err != nil || ids(pkgs) != want {
			t.Errorf("orderFor(%s): %s, %v; want %s", platform, ids(pkgs), err, want)
		}
	}
	_, err = back.orderFor("linux-riscv64")
	var pe *LockPlatformError
	if !errors.As(err, &pe) || !reflect.DeepEqual(*pe, LockPlatformError{Platforms: []string{"linux-amd64", "linux-arm64"}, Platform: "linux-riscv64"}) {
		t.Errorf("orderFor(linux-riscv64): %v, want a *LockPlatformError naming both platforms", err)
	}
	if Host != "linux-amd64" && Host != "linux-arm64" {
		return
	}
	if pkgs, err := back.Order(); err != nil || len(pkgs) == 0 || !strings.Contains(pkgs[len(pkgs)-1].Archive, Host) {
		t.Errorf("Order here (%s): %s, %v; want this machine's hello", Host, ids(pkgs), err)
	}
}

func TestLockPlatformsRefused(t *testing.T) {
	good := encodeLock(t, platformLock(t, "hello", "libgreet"))
	amd := `"platform":"linux-amd64"}`
	arm := regexp.MustCompile(`\n    \{"name":"hello","version":"1.1".*`).FindString(good)
	for _, tt := range []struct{ name, from, to, want string }{
		{"no platforms", `"platforms": ["linux-amd64","linux-arm64"],` + "\n", "", `platform "linux-amd64" is not one of the lockfile's platforms`},
		{"bad platform", `["linux-amd64","linux-arm64"]`, `["linux-amd64","linux-arm"]`, `platform "linux-arm64" is not one of the lockfile's platforms`},
		{"unsorted platforms", `["linux-amd64","linux-arm64"]`, `["linux-arm64","linux-amd64"]`, "linux-amd64 is out of order"},
		{"twice for one platform", `"platform":"linux-arm64"}`, `"platform":"linux-amd64"}`, "hello is out of order or listed twice"},
		{"for all and for one", amd, `"platform":""}`, "hello: a line for all platforms and one for linux-arm64"},
		{"line missing", arm, "", `for linux-arm64: package "hello" not found`},
	} {
		text := strings.Replace(good, tt.from, tt.to, 1)
		if text == good {
			t.Fatalf("%s: no %s in\n%s", tt.name, tt.from, good)
		}
		_, err := decodeLock([]byte(relock(text)))
		if !errors.Is(err, ErrLockfile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: decodeLock: %v, want an ErrLockfile naming %q", tt.name, err, tt.want)
		}
	}
}

func TestLockPlatformsOutdated(t *testing.T) {
	l := platformLock(t, "hello")
	ix, err := Parse([]byte(multiIndex))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Outdated(ix); err != nil {
		t.Errorf("Outdated against its own index: %v", err)
	}
	ix.Packages = append(ix.Packages, Package{Name: "hello", Version: "1.2", Archive: "hello-1.2-linux-amd64.tar", SHA256: testSum, Platform: "linux-amd64"})
	if err := l.Outdated(ix); !stale(err, "linux-amd64", "hello 1.0", "hello 1.2") {
		t.Errorf("Outdated with a newer amd64 hello: %v", err)
	}
}

func TestSearchPlatform(t *testing.T) {
	ix, err := Parse([]byte(multiIndex))
	if err != nil {
		t.Fatal(err)
	}
	for platform, want := range map[string]string{
		"linux-amd64": "hello 1.0, libgreet 2.0",
		"linux-arm64": "hello 1.1, jq 1.7, libgreet 2.0",
	} {
		if got := ids(ix.ForPlatform(platform).Search("")); got != want {
			t.Errorf("Search for %s: %s, want %s", platform, got, want)
		}
	}
}

// TestAddURL records an archive by its URL: no copy in dir, the size and sha256 of the
// download, the entry signed as any other; a URL that is not http(s) is refused.
func TestAddURL(t *testing.T) {
	dir := t.TempDir()
	const url = "https://upstream.example/releases/tool-1.0.tar.gz"
	download := writeArchive(t, "download", "the upstream bytes")
	var signed []byte
	s := &Signer{Name: "team", Expires: time.Now().Add(time.Hour), Sign: func(b []byte) []byte { signed = b; return []byte("sig") }}
	res, err := AddURL(t.Context(), dir, url, download, Package{Name: "tool", Version: "1.0", Platform: "linux-arm64"}, false, s)
	if err != nil {
		t.Fatal(err)
	}
	p, m := res.Package, res.Meta
	if p.Archive != url || p.Size != int64(len("the upstream bytes")) || p.SHA256 != sum("the upstream bytes") || m.Version != 1 {
		t.Errorf("AddURL: %+v, %+v", p, m)
	}
	checkDir(t, dir, "index.json", "index.json.sig")
	if ix := readIndexFile(t, dir); len(ix.Packages) != 1 || ix.Packages[0].Archive != url || !strings.Contains(string(signed), url) {
		t.Errorf("index %+v, signed %s", ix.Packages, signed)
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://upstream.example/tool.tar", "https:///no-host.tar"} {
		if _, err := AddURL(t.Context(), dir, bad, download, Package{Name: "tool", Version: "2.0"}, false, s); errAs[*archiveError](err) == nil || errAs[*archiveError](err).archive != bad {
			t.Errorf("AddURL(%s): %v, want an error naming it", bad, err)
		}
	}
	checkDir(t, dir, "index.json", "index.json.sig")
}

func TestParsePlatformValues(t *testing.T) {
	got, err := ParsePlatforms([]string{"linux-amd64,linux-arm64", "darwin-arm64"})
	if want := []string{"linux-amd64", "linux-arm64", "darwin-arm64"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePlatforms = %q, %v; want %q", got, err, want)
	}
	var be *badPlatformError
	if _, err := ParsePlatforms([]string{"linux-amd64,linux-armv7"}); !errors.As(err, &be) || be.Platform != "linux-armv7" {
		t.Errorf("ParsePlatforms of linux-armv7: %v", err)
	}
}
