package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pkg/pkgtest/testregistry"
)

// TestRepoAddCycle checks that repo add takes packages that depend on each other in a
// cycle, as Debian's libc6 and libgcc-s1 do, and that install installs the cycle after
// what it depends on and before what depends on it.
func TestRepoAddCycle(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	for _, p := range []struct {
		name    string
		depends []string
	}{
		{"selfy", []string{"selfy"}},
		{"cyca", []string{"cycb>=0,<2", "base"}}, // one value with a comma: one constraint
		{"cycb", []string{"cyca>=1", "selfy"}},
		{"base", nil},
		{"app", []string{"cycb"}},
	} {
		archive := filepath.Join(base, p.name+"-1.tar")
		if err := os.WriteFile(archive, packageTar(t, p.name, "1", 'x'), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"repo", "add", dir, archive, "--name", p.name, "--version", "1"}
		for _, d := range p.depends {
			args = append(args, "--depends", d)
		}
		e.ok(args...)
	}
	out, _ := e.ok("install", "app")
	var order []string
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(line, "installed "); ok {
			order = append(order, strings.Fields(rest)[0])
		}
	}
	if got, want := strings.Join(order, " "), "base selfy cyca cycb app"; got != want {
		t.Errorf("install app: installed %s, want %s\n%s", got, want, out)
	}
	if out, _ := e.ok("remove", "app", "cyca", "cycb", "selfy", "base"); strings.Count(out, "removed ") != 5 {
		t.Errorf("remove of the cycle and what it needs:\n%s", out)
	}
}

// TestRepoRemove removes a version and a package from a repository directory, deleting
// their archives; refuses, changing nothing and naming the package, one the index lacks
// or that another package depends on (unless --force); and re-signs a signed repository.
func TestRepoRemove(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1")
	addPackage(t, dir, "app", "1", "lib>=1")
	addPackage(t, dir, "tool", "1")
	addPackage(t, dir, "tool", "2")
	e := newEnv(t, base, dir)
	index := filepath.Join(dir, "index.json")
	before, _ := os.ReadFile(index)
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"lib"}, 1, "pkg: remove lib from " + dir + ": lib is needed by app 1 (lib>=1), which nothing else in the index satisfies\n" +
			"pkg: hint: remove those packages (or versions) first, or pass --force to leave their dependencies unmet\n"},
		{[]string{"nope"}, 1, "pkg: remove nope from " + dir + ": the index has no package nope\n"},
		{[]string{"tool=3"}, 1, "pkg: remove tool 3 from " + dir + ": the index has no tool 3 (it has tool 1, 2)\n"},
		{[]string{"tool="}, 2, `pkg: repo remove: no version after "tool="`},
		{nil, 2, "pkg: repo remove: want REPO_DIR NAME[=VERSION], got 1 argument"},
	} {
		_, stderr, code := e.pkg(append([]string{"repo", "remove", dir}, tt.args...)...)
		if code != tt.code || !strings.HasPrefix(stderr, tt.stderr) {
			t.Errorf("repo remove %q: exit %d, %q; want %d, %q", tt.args, code, stderr, tt.code, tt.stderr)
		}
		if after, _ := os.ReadFile(index); !bytes.Equal(after, before) {
			t.Errorf("refused repo remove %q changed index.json", tt.args)
		}
	}
	if out, _ := e.ok("repo", "remove", dir, "tool=1"); out != "removed tool 1 from "+dir+"\ndeleted "+filepath.Join(dir, "tool-1.tar")+"\n" {
		t.Errorf("repo remove tool=1: %q", out)
	}
	out, stderr := e.ok("repo", "remove", dir, "lib", "--force")
	if out != "removed lib 1 from "+dir+"\ndeleted "+filepath.Join(dir, "lib-1.tar")+"\n" ||
		stderr != "pkg: warning: app 1 depends on lib>=1, which "+dir+" no longer satisfies\n" {
		t.Errorf("repo remove lib --force: %q, %q", out, stderr)
	}
	e.ok("repo", "remove", dir, "app")
	e.ok("repo", "remove", dir, "tool")
	if out, _ := e.ok("search"); out != "" {
		t.Errorf("search of the emptied repository: %q", out)
	}
	if got := names(t, dir); got != "index.json" {
		t.Errorf("%s holds %q, want only index.json", dir, got)
	}

	r := newSignedRepo(t)
	sig := filepath.Join(r.dir, "index.json.sig")
	signed, _ := os.ReadFile(sig)
	if _, stderr, code := r.publisher().pkg("repo", "remove", r.dir, "fortunes"); code != 1 || !strings.Contains(stderr, r.dir+" is signed") {
		t.Errorf("repo remove from a signed repository without --key: exit %d, %q", code, stderr)
	}
	if now, _ := os.ReadFile(sig); !bytes.Equal(now, signed) {
		t.Errorf("refused repo remove changed the signature")
	}
	if out, _ := r.publisher().ok("repo", "remove", r.dir, "fortunes", "--key", r.key); !strings.Contains(out, "signed "+r.dir+": repository demo, version 2") {
		t.Errorf("signed repo remove: %q", out)
	}
	user, trusted := r.user()
	if out, _ := user.ok(append(trusted, "search")...); strings.Contains(out, "fortunes") || !strings.Contains(out, "hello") {
		t.Errorf("search of the signed repository after the remove: %q", out)
	}
}

// TestRepoAddReplacedArchive adds a version again from a file named otherwise: the entry
// keeps the archive it has, and the directory holds no second copy; then, with --replace,
// other bytes: they take a name of their own, and the archive replaced is deleted, as the
// note says, leaving the directory holding only what its index names.
func TestRepoAddReplacedArchive(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(packageTar(t, "tool", "1.0", 'x'))
	w.Close()
	for _, name := range []string{"tool-1.0.tar.gz", "renamed.tgz"} {
		if err := os.WriteFile(filepath.Join(base, name), gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, stderr := e.ok("repo", "add", dir, filepath.Join(base, name), "--name", "tool", "--version", "1.0"); !strings.Contains(out, ": tool-1.0.tar.gz, ") || strings.Contains(stderr, "replaced") {
			t.Errorf("repo add of %s: %q, %q; want tool-1.0.tar.gz, nothing replaced", name, out, stderr)
		}
		if got := names(t, dir); got != "index.json tool-1.0.tar.gz" {
			t.Errorf("after repo add of %s, %s holds %s", name, dir, got)
		}
	}
	other := filepath.Join(base, "other.tar")
	if err := os.WriteFile(other, packageTar(t, "tool", "1.0", 'y'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr := e.ok("repo", "add", dir, other, "--name", "tool", "--version", "1.0", "--replace")
	if !strings.Contains(out, ": tool-1.0-2.tar, ") || !strings.Contains(stderr, "pkg: note: this replaced the entry of tool 1.0 (archive tool-1.0.tar.gz, depends [], bin []), and deleted tool-1.0.tar.gz, which no entry names now") {
		t.Errorf("repo add --replace of other bytes: %q, %q", out, stderr)
	}
	if got := names(t, dir); got != "index.json tool-1.0-2.tar" {
		t.Errorf("after repo add --replace, %s holds %s", dir, got)
	}
	if out, _ := e.ok("install", "tool"); !strings.Contains(out, "installed tool 1.0") {
		t.Errorf("install after the replace: %q", out)
	}
}

// TestRepoLeftArchive: an archive that cannot be deleted once the new index is written
// and signed (here a directory holding a file at its name, as chattr +i makes a file)
// leaves the change made: repo add --replace and repo remove exit 0, say what they did and
// the signature, and warn of the archive left, naming it and why.
func TestRepoLeftArchive(t *testing.T) {
	r := newSignedRepo(t)
	undeletable := func(name string) string {
		file := filepath.Join(r.dir, name)
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(file, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		return file
	}
	file := undeletable("hello-1.2.0.tar.zst")
	other := filepath.Join(t.TempDir(), "other.tar")
	if err := os.WriteFile(other, packageTar(t, "hello", "1.2.0", 'y'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr := r.publisher().ok("repo", "add", r.dir, other, "--name", "hello", "--version", "1.2.0", "--replace", "--key", r.key)
	if !strings.Contains(out, "added hello 1.2.0 to "+r.dir+": hello-1.2.0-2.tar, ") || !strings.Contains(out, "signed "+r.dir+": repository demo, version 2") ||
		!strings.Contains(stderr, "pkg: note: this replaced the entry of hello 1.2.0 (archive hello-1.2.0.tar.zst, ") || strings.Contains(stderr, "and deleted") ||
		!strings.Contains(stderr, "pkg: warning: could not delete "+file+", which no entry names now: ") || !strings.Contains(stderr, "delete it by hand") {
		t.Errorf("repo add --replace of an entry whose archive cannot be deleted:\n%s%s", out, stderr)
	}

	file = undeletable("fortunes-0.9.1.tar.xz")
	out, stderr = r.publisher().ok("repo", "remove", r.dir, "fortunes", "--key", r.key)
	if !strings.Contains(out, "removed fortunes 0.9.1 from "+r.dir) || strings.Contains(out, "deleted") || !strings.Contains(out, "signed "+r.dir+": repository demo, version 3") ||
		!strings.Contains(stderr, "pkg: warning: could not delete "+file+", which no entry names now: ") {
		t.Errorf("repo remove of an entry whose archive cannot be deleted:\n%s%s", out, stderr)
	}
	user, trusted := r.user()
	if out, _ := user.ok(append(trusted, "install", "hello")...); !strings.Contains(out, "installed hello 1.2.0") {
		t.Errorf("install after both: %q", out)
	}
}

// signedWithExtra returns a signed repository to which the archive of extra 1.0 was added
// with its key, and the command line that added it.
func signedWithExtra(t *testing.T) (*signedRepo, []string) {
	r := newSignedRepo(t)
	archive := filepath.Join(t.TempDir(), "extra-1.0.tar")
	if err := os.WriteFile(archive, packageTar(t, "extra", "1.0", 'e'), 0o644); err != nil {
		t.Fatal(err)
	}
	add := []string{"repo", "add", r.dir, archive, "--name", "extra", "--version", "1.0", "--key", r.key}
	r.publisher().ok(add...)
	return r, add
}

// TestRepoAddAgainSigned adds to a signed repository an archive it has already: repo add
// says so and that the repository is unchanged, signed as it was, and names no new
// version; index.json and its signature are as they were.
func TestRepoAddAgainSigned(t *testing.T) {
	r, add := signedWithExtra(t)
	index, sig := r.files()
	out, _ := r.publisher().ok(add...)
	if !strings.Contains(out, "extra 1.0 is in "+r.dir+" already, the same archive and entry: ") ||
		!strings.Contains(out, r.dir+" unchanged: its index.json has every entry already, signed as it was (repository demo, version 2, expires ") ||
		strings.Contains(out, "signed "+r.dir) {
		t.Errorf("repo add of an entry the repository has:\n%s", out)
	}
	if nowIndex, nowSig := r.files(); !bytes.Equal(nowIndex, index) || !bytes.Equal(nowSig, sig) {
		t.Error("repo add of an entry the repository has rewrote its index or signature")
	}
}

// TestRepoAddAgainLongerExpiry adds an archive a signed repository has already with an
// --expires more than twice what its signature has left: the add still writes nothing, and
// a note says the signature keeps its expiry and gives the repo sign line that extends it,
// which does; an --expires that the signature still has half of (the add that signed it,
// run again), asks for less, or none, says nothing of it.
func TestRepoAddAgainLongerExpiry(t *testing.T) {
	r, add := signedWithExtra(t)
	index, sig := r.files()
	for _, flags := range [][]string{nil, {"--expires", "1h"}, {"--expires", "720h"}} {
		if _, stderr := r.publisher().ok(append(add, flags...)...); strings.Contains(stderr, "signs nothing") {
			t.Errorf("repo add again %v: %q, want no note of the expiry", flags, stderr)
		}
	}
	_, stderr := r.publisher().ok(append(add, "--expires", "8760h")...)
	line := "pkg repo sign " + r.dir + " --key " + r.key + " --expires 8760h"
	if !strings.Contains(stderr, "pkg: note: its signature still expires ") ||
		!strings.Contains(stderr, "in less than half the --expires 8760h: an add that changes no entry signs nothing; '"+line+"' signs it again") {
		t.Errorf("repo add again with a longer --expires: stderr %q; want the note naming %q", stderr, line)
	}
	if nowIndex, nowSig := r.files(); !bytes.Equal(nowIndex, index) || !bytes.Equal(nowSig, sig) {
		t.Error("repo add of an entry the repository has rewrote its index or signature")
	}
	r.publisher().ok(strings.Fields(line)[1:]...)
	var m struct{ Expires time.Time }
	data, _ := r.files()
	if err := json.Unmarshal(data, &m); err != nil || m.Expires.Before(time.Now().Add(8000*time.Hour)) {
		t.Errorf("after %q: the index expires %v (%v), want a year from now", line, m.Expires, err)
	}
}

// TestRepoAddAgainDefaultExpiry adds an archive a signed repository has already, without
// --expires, where the signature has less than half the default left: no note of the
// expiry, which names only an --expires the user gave.
func TestRepoAddAgainDefaultExpiry(t *testing.T) {
	r, add := signedWithExtra(t)
	r.publisher().ok("repo", "sign", r.dir, "--key", r.key, "--expires", "100h")
	if _, stderr := r.publisher().ok(add...); strings.Contains(stderr, "signs nothing") {
		t.Errorf("repo add again without --expires: %q, want no note of the expiry", stderr)
	}
}

// TestRepoPushBodyLimit pushes through a proxy that refuses request bodies over 32 KiB, as
// nginx's client_max_body_size does: the 413 stops the push, with a hint naming the body
// refused and the chunk size used, and a smaller --chunk-size then pushes it.
func TestRepoPushBodyLimit(t *testing.T) {
	e, dir := repoOf(t, "big", "1.0", 'x')
	reg := testregistry.New(t)
	reg.MaxBody = 32 << 10
	_, stderr, code := e.pkg("repo", "push", dir, reg.URL())
	if code != 1 || !strings.Contains(stderr, "413 Request Entity Too Large") ||
		!strings.Contains(stderr, "pkg: hint: the registry, or a proxy in front of it, refused a request's body of 67.5 KiB as too large (a blob over --chunk-size, 64.0 MiB here, goes in chunks of that size): push again with a smaller --chunk-size") {
		t.Errorf("push through a 32 KiB body limit: exit %d, %q; want the 413 and the hint", code, stderr)
	}
	if reg.Manifest("latest") != nil {
		t.Error("a manifest was tagged")
	}
	if out, _ := e.ok("repo", "push", dir, reg.URL(), "--chunk-size", "16KiB"); !strings.Contains(out, "pushed "+dir) {
		t.Errorf("push in chunks of 16 KiB: %q", out)
	}
}

// TestRepoPushBusy pushes to a registry that answers an upload's start and the manifest's
// PUT 429 Too Many Requests once each, as a rate limit does: each is sent again, said in a
// note, and the push ends with the manifest tagged.
func TestRepoPushBusy(t *testing.T) {
	e, dir := toolRepo(t)
	reg := testregistry.New(t)
	reg.Busy = map[string]int{"POST blobs": 1, "PUT manifests": 1}
	out, stderr := e.ok("repo", "push", dir, reg.URL())
	if !strings.Contains(out, "pushed "+dir) || reg.Manifest("latest") == nil || len(reg.Refused) != 2 {
		t.Errorf("push through two 429s: %q, manifest %q, refused %q", out, reg.Manifest("latest"), reg.Refused)
	}
	for _, want := range []string{"pkg: note: POST " + reg.Reg.URL + "/v2/pkg/main/blobs/uploads/: 429 Too Many Requests", "pkg: note: PUT " + reg.Reg.URL + "/v2/pkg/main/manifests/latest: 429 Too Many Requests"} {
		if !strings.Contains(stderr, want+" (TOOMANYREQUESTS too many requests); trying again in ") {
			t.Errorf("push through two 429s said %q; want %q", stderr, want)
		}
	}
}

// TestRepoPushBusyTag pushes to a registry that answers the read of what the tag names
// 429 Too Many Requests once: the wait before asking again is said in a note, as an
// install's is, not kept silent.
func TestRepoPushBusyTag(t *testing.T) {
	e, dir := toolRepo(t)
	reg := testregistry.New(t)
	reg.Busy = map[string]int{"GET manifests": 1}
	out, stderr := e.ok("repo", "push", dir, reg.URL())
	if !strings.Contains(out, "pushed "+dir) || len(reg.Refused) != 1 {
		t.Errorf("push through a 429 to the tag's read: %q, refused %q", out, reg.Refused)
	}
	if want := "pkg: note: GET " + reg.Reg.URL + "/v2/pkg/main/manifests/latest: 429 Too Many Requests"; !strings.Contains(stderr, want) {
		t.Errorf("push through a 429 to the tag's read said %q; want %q", stderr, want)
	}
}

// TestRepoPushUnavailable pushes to a registry that fails for now, once each: its token
// server (504), the read of the tagged index (503), an upload's start (502) and the
// manifest's PUT (500), as a registry restarting or behind an overloaded proxy does: each
// is sent again, said in a note as a read's retry is, and the push ends with the manifest
// tagged.
func TestRepoPushUnavailable(t *testing.T) {
	e, dir := toolRepo(t)
	for _, step := range []struct {
		busy string // the request refused, "token" for the token server's
		code int
		want string // the note, after the method and the registry's URL
	}{
		// The first request a token is asked for is the read of the tagged index.
		{"token", http.StatusGatewayTimeout, "GET /v2/pkg/main/manifests/latest: registry %s/pkg/main: token from "},
		{"GET manifests", http.StatusServiceUnavailable, "GET /v2/pkg/main/manifests/latest: 503 Service Unavailable; trying again in "},
		{"POST blobs", http.StatusBadGateway, "POST /v2/pkg/main/blobs/uploads/: 502 Bad Gateway (UNAVAILABLE try again later); trying again in "},
		{"PUT manifests", http.StatusInternalServerError, "PUT /v2/pkg/main/manifests/latest: 500 Internal Server Error (UNAVAILABLE try again later); trying again in "},
	} {
		reg := testregistry.New(t)
		reg.BusyStatus = step.code
		if step.busy == "token" {
			reg.TokenBusy = 1
		} else {
			reg.Busy = map[string]int{step.busy: 1}
		}
		method, path, _ := strings.Cut(step.want, " ")
		want := method + " " + reg.Reg.URL + path
		if strings.Contains(want, "%s") {
			want = fmt.Sprintf(want, reg.Reg.Listener.Addr())
		}
		out, stderr := e.ok("repo", "push", dir, reg.URL())
		if !strings.Contains(out, "pushed "+dir) || reg.Manifest("latest") == nil || !strings.Contains(stderr, "pkg: note: "+want) ||
			!strings.Contains(stderr, strconv.Itoa(step.code)) {
			t.Errorf("push through %s %d: %q, %q; want the manifest pushed and a note %q", step.busy, step.code, out, stderr, want)
		}
	}
}

// TestRepoPushOlder pushes version 1 of a signed repository over the version 2 the tag
// names: refused, naming both, with a hint; --force pushes it.
func TestRepoPushOlder(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	key := filepath.Join(base, "key")
	e.ok("repo", "keygen", "-o", key)
	archive := filepath.Join(base, "big-1.0.tar")
	if err := os.WriteFile(archive, packageTar(t, "big", "1.0", 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", dir, archive, "--name", "big", "--version", "1.0", "--key", key)
	old := filepath.Join(base, "old")
	if err := os.CopyFS(old, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "sign", dir, "--key", key)
	reg := testregistry.New(t)
	e.ok("repo", "push", dir, reg.URL())
	_, stderr, code := e.pkg("repo", "push", old, reg.URL())
	if code != 1 || !strings.Contains(stderr, "index version 1 is older than version 2") || !strings.Contains(stderr, "pushes with --force") {
		t.Errorf("push of version 1 over 2: exit %d, %q; want the refusal and the hint", code, stderr)
	}
	e.ok("repo", "push", old, reg.URL(), "--force")
}

// TestRepoPushOverImage pushes to a tag naming a container image: refused with a hint,
// the image kept; --force replaces it.
func TestRepoPushOverImage(t *testing.T) {
	e, dir := toolRepo(t)
	reg := testregistry.New(t)
	config := reg.Put([]byte(`{"architecture":"amd64","os":"linux"}`))
	image := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + config + `","size":37},"layers":[]}`)
	reg.Tag("latest", "application/vnd.oci.image.manifest.v1+json", image)
	_, stderr, code := e.pkg("repo", "push", dir, reg.URL())
	if code != 1 || !strings.Contains(stderr, "the tag names what is not a pkg repository") || !strings.Contains(stderr, "pass --force to replace what the tag names") {
		t.Errorf("push over an image: exit %d, %q; want the refusal and the hint", code, stderr)
	}
	if !bytes.Equal(reg.Manifest("latest"), image) {
		t.Error("the image's tag moved")
	}
	e.ok("repo", "push", dir, reg.URL(), "--force")
}

// TestRepoPushNotARegistry pushes to an http URL: refused, naming the target given and
// the form of a registry reference, with no package's name in the message.
func TestRepoPushNotARegistry(t *testing.T) {
	e, dir := toolRepo(t)
	_, stderr, code := e.pkg("repo", "push", dir, "http://127.0.0.1:5000/ns/repo")
	if code != 1 || !strings.Contains(stderr, "http://127.0.0.1:5000/ns/repo") || !strings.Contains(stderr, "oci://HOST[:PORT]/NAMESPACE/REPO[:TAG]") ||
		strings.Contains(stderr, "oci: ") {
		t.Errorf("push to an http URL: exit %d, %q; want the target and oci://HOST[:PORT]/NAMESPACE/REPO[:TAG]", code, stderr)
	}
}

// toolRepo returns an environment and its repository directory, which holds tool 1.0.
func toolRepo(t *testing.T) (*env, string) {
	t.Helper()
	return repoOf(t, "tool", "1.0", 'x')
}

// repoOf returns an environment and its repository directory, in a directory of its own,
// which holds name version, its file filled with fill (packageTar).
func repoOf(t *testing.T, name, version string, fill byte) (*env, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	e := newEnv(t, base, dir)
	archive := filepath.Join(base, name+"-"+version+".tar")
	if err := os.WriteFile(archive, packageTar(t, name, version, fill), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("repo", "add", dir, archive, "--name", name, "--version", version)
	return e, dir
}
