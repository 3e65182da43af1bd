package repo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testRepoURL = "https://example.com/repo/"

// testLock resolves reqs against the index lines and locks the result, with each
// archive's URL under testRepoURL.
func testLock(t testing.TB, index []string, reqs ...string) *Lock {
	t.Helper()
	var rs []Requirement
	for _, s := range reqs {
		r, err := ParseRequirement(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	pkgs, err := testIndex(index...).Resolve(rs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkgs {
		pkgs[i].Archive = testRepoURL + pkgs[i].Archive
	}
	return NewLock(testRepoURL, rs, pkgs)
}

var lockIndex = []string{"app 1.0 lib>=1,<2", "lib 1.5", "lib 2.5", "tool 1.0", "tool 2.0"}

func encodeLock(t testing.TB, l *Lock) string {
	t.Helper()
	var b bytes.Buffer
	if err := l.encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestLockRoundTrip(t *testing.T) {
	l := testLock(t, lockIndex, "tool<2", "app", "tool<2")
	got := encodeLock(t, l)
	want := `{
  "lockfile": 1,
  "repo": "https://example.com/repo/",
  "inputs": "` + Inputs(l.Requires) + `",
  "locked": "sha256:25cde3830b00470fde33249c5f95719e814df2e8f98ac7aba76c5a8149c63c75",
  "requires": [
    "app",
    "tool<2"
  ],
  "packages": [
    {"name":"app","version":"1.0","url":"https://example.com/repo/app-1.0.tar","size":0,"sha256":"` + testSum + `","depends":["lib>=1,<2"]},
    {"name":"lib","version":"1.5","url":"https://example.com/repo/lib-1.5.tar","size":0,"sha256":"` + testSum + `"},
    {"name":"tool","version":"1.0","url":"https://example.com/repo/tool-1.0.tar","size":0,"sha256":"` + testSum + `"}
  ]
}
`
	if got != want {
		t.Errorf("encode:\n%s\nwant:\n%s", got, want)
	}
	back, err := decodeLock([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withoutOrders(back), l) {
		t.Errorf("decodeLock(encode(l)) = %+v, want %+v", back, l)
	}
	order, err := back.Order()
	if err != nil || ids(order) != "lib 1.5, app 1.0, tool 1.0" {
		t.Errorf("Order = %q, %v", ids(order), err)
	}
}

// TestLockName round-trips the name of a lock of one repository, written after its URL,
// and reads a lockfile without one, as older pkg wrote them, as naming none.
func TestLockName(t *testing.T) {
	l := testLock(t, lockIndex, "app")
	unnamed := encodeLock(t, l)
	l.Name = "private"
	named := encodeLock(t, l)
	if want := "\"repo\": \"" + testRepoURL + "\",\n  \"name\": \"private\",\n  \"inputs\""; !strings.Contains(named, want) {
		t.Errorf("encode:\n%s\nwant %s in it", named, want)
	}
	for text, want := range map[string]string{named: "private", unnamed: ""} {
		back, err := decodeLock([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if back.Name != want {
			t.Errorf("decodeLock: name %q, want %q", back.Name, want)
		}
		if r, _ := back.Of(""); r.Name != want {
			t.Errorf("Of: name %q, want %q", r.Name, want)
		}
	}
}

func TestWriteReadLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pkg.lock")
	l := testLock(t, lockIndex, "app")
	if err := WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLock(path)
	if err != nil || !reflect.DeepEqual(withoutOrders(got), l) || got.path != path {
		t.Errorf("ReadLock = %+v, %v; want %+v, read from %s", got, err, l, path)
	}
	checkDir(t, filepath.Dir(path), "pkg.lock")
}

// TestWriteLockUnchanged writes a lockfile again as it is, which leaves the file alone (its
// inode and mtime), then another, which replaces it.
func TestWriteLockUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pkg.lock")
	l := testLock(t, lockIndex, "app")
	if err := WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	then := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
	stat := func() (uint64, time.Time) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino, fi.ModTime()
	}
	ino, _ := stat()
	if err := WriteLock(path, l); err != nil {
		t.Fatal(err)
	}
	if gotIno, mtime := stat(); gotIno != ino || !mtime.Equal(then) {
		t.Errorf("written again unchanged: inode %d, mtime %v; want %d, %v", gotIno, mtime, ino, then)
	}
	if err := WriteLock(path, testLock(t, lockIndex, "tool")); err != nil {
		t.Fatal(err)
	}
	if gotIno, mtime := stat(); gotIno == ino || mtime.Equal(then) {
		t.Errorf("written with another lock: inode %d, mtime %v; want it replaced", gotIno, mtime)
	}
}

// TestWriteLockKeepsMode: a lockfile written again keeps the mode it was given, through a
// link too.
func TestWriteLockKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path, link := filepath.Join(dir, "ci.lock"), filepath.Join(dir, "pkg.lock")
	if err := WriteLock(path, testLock(t, lockIndex, "app")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ci.lock", link); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o600, 0o664} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if err := WriteLock(link, testLock(t, lockIndex, "tool")); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("a lockfile of mode %v written again: %v, %v", mode, fi.Mode(), err)
		}
	}
}

// TestWriteLockThroughLink: a lockfile kept elsewhere and linked to (pkg.lock ->
// ci/pkg.lock) is written where it is, and the link stays; so too where the file is not
// there yet (the first pkg lock), and through a chain of links.
func TestWriteLockThroughLink(t *testing.T) {
	for _, tt := range []struct {
		name  string
		exist bool     // ci/pkg.lock is there before
		links []string // each link's name and target, pkg.lock first
	}{
		{"existing", true, []string{"pkg.lock", "ci/pkg.lock"}},
		{"dangling", false, []string{"pkg.lock", "ci/pkg.lock"}},
		{"chain", false, []string{"pkg.lock", "ci/link", "ci/link", "pkg.lock"}},
	} {
		dir := t.TempDir()
		real, link := filepath.Join(dir, "ci", "pkg.lock"), filepath.Join(dir, "pkg.lock")
		if err := os.Mkdir(filepath.Dir(real), 0o755); err != nil {
			t.Fatal(err)
		}
		if tt.exist {
			if err := WriteLock(real, testLock(t, lockIndex, "tool")); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(tt.links); i += 2 {
			if err := os.Symlink(tt.links[i+1], filepath.Join(dir, tt.links[i])); err != nil {
				t.Fatal(err)
			}
		}
		l := testLock(t, lockIndex, "app")
		if err := WriteLock(link, l); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i := 0; i < len(tt.links); i += 2 {
			if fi, err := os.Lstat(filepath.Join(dir, tt.links[i])); err != nil || fi.Mode().Type() != os.ModeSymlink {
				t.Errorf("%s: after WriteLock through the link, %s is not a symlink (%v)", tt.name, tt.links[i], err)
			}
		}
		got, err := ReadLock(real)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got.Requires, l.Requires) {
			t.Errorf("%s: ReadLock(%s): requires %v; want %v, written through the link", tt.name, real, got.Requires, l.Requires)
		}
		if tt.name != "chain" {
			checkDir(t, filepath.Dir(real), "pkg.lock")
		}
	}

	// A link that leads to itself is refused, and stays.
	loop := filepath.Join(t.TempDir(), "pkg.lock")
	if err := os.Symlink("pkg.lock", loop); err != nil {
		t.Fatal(err)
	}
	if err := WriteLock(loop, testLock(t, lockIndex, "app")); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("WriteLock through a link to itself: %v, want ELOOP", err)
	}
	if fi, err := os.Lstat(loop); err != nil || fi.Mode().Type() != os.ModeSymlink {
		t.Errorf("after WriteLock through a loop, %s is not a symlink (%v)", loop, err)
	}
}

// TestWriteLockThroughLinkedDir writes a lockfile through a link in a linked directory
// whose target climbs out of it (proj/link -> ../A/B, A/B/pkg.lock -> ../C/pkg.lock): the
// file written is A/C/pkg.lock, where the kernel's lookup of proj/link/pkg.lock leads,
// there or not yet, and not proj/C/pkg.lock, which a lexical join names.
func TestWriteLockThroughLinkedDir(t *testing.T) {
	for _, exist := range []bool{false, true} {
		dir := t.TempDir()
		for _, d := range []string{"A/B", "A/C", "proj/C"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := errors.Join(os.Symlink("../A/B", filepath.Join(dir, "proj/link")), os.Symlink("../C/pkg.lock", filepath.Join(dir, "A/B/pkg.lock"))); err != nil {
			t.Fatal(err)
		}
		real := filepath.Join(dir, "A/C/pkg.lock")
		if exist {
			if err := WriteLock(real, testLock(t, lockIndex, "tool")); err != nil {
				t.Fatal(err)
			}
		}
		l := testLock(t, lockIndex, "app")
		if err := WriteLock(filepath.Join(dir, "proj/link/pkg.lock"), l); err != nil {
			t.Errorf("there before %v: %v", exist, err)
			continue
		}
		if got, err := ReadLock(real); err != nil || !reflect.DeepEqual(got.Requires, l.Requires) {
			t.Errorf("there before %v: ReadLock(%s): %v; want requires %v, written through the links", exist, real, err, l.Requires)
		}
		checkDir(t, filepath.Join(dir, "proj/C"))
		if fi, err := os.Lstat(filepath.Join(dir, "A/B/pkg.lock")); err != nil || fi.Mode().Type() != os.ModeSymlink {
			t.Errorf("there before %v: A/B/pkg.lock is no longer a link (%v)", exist, err)
		}
	}
}

func TestLockEmpty(t *testing.T) {
	l := NewLock(testRepoURL, nil, nil)
	text := encodeLock(t, l)
	if !strings.Contains(text, `"requires": []`) || !strings.Contains(text, `"packages": []`) {
		t.Errorf("empty lock:\n%s", text)
	}
	if _, err := decodeLock([]byte(text)); err != nil {
		t.Error(err)
	}
}

func TestInputs(t *testing.T) {
	same := [][]string{
		{"jq=1.7.1", "app"},
		{"app", "jq=1.7.1"},
		{"app", "jq=1.7.1", "app"},
	}
	want := Inputs(parseReqs(t, same[0]...))
	for _, reqs := range same[1:] {
		if got := Inputs(parseReqs(t, reqs...)); got != want {
			t.Errorf("Inputs(%q) = %s, want %s as for %q", reqs, got, want, same[0])
		}
	}
	for _, reqs := range [][]string{{"app"}, {"app", "jq>=1.7.1"}, {"app", "jq@1.7.1"}, {"app", "jq=1.7.1", "tool"}} {
		if got := Inputs(parseReqs(t, reqs...)); got == want {
			t.Errorf("Inputs(%q) = %s, the same as for %q", reqs, got, same[0])
		}
	}
	if !strings.HasPrefix(want, "sha256:") || len(want) != len("sha256:")+64 {
		t.Errorf("Inputs = %q", want)
	}
}

// relock returns the lockfile text with its "locked" digest made that of its packages as
// they now are, so that an edit reaches the checks past the digest; text that is not a
// lockfile's JSON as it is.
func relock(text string) string {
	var lf lockFile
	if json.Unmarshal([]byte(text), &lf) != nil {
		return text
	}
	return strings.Replace(text, `"locked": "`+lf.Locked+`"`, `"locked": "`+digestEntries(lf.Packages)+`"`, 1)
}

func TestParseLockRefuses(t *testing.T) {
	full := encodeLock(t, testLock(t, lockIndex, "app", "tool<2"))
	good := full
	appLine := `{"name":"app","version":"1.0","url":"https://example.com/repo/app-1.0.tar","size":0,"sha256":"` + testSum + `","depends":["lib>=1,<2"]}`
	libLine := `{"name":"lib","version":"1.5","url":"https://example.com/repo/lib-1.5.tar","size":0,"sha256":"` + testSum + `"}`
	tests := []struct {
		name, old, new, want string
	}{
		{"format", `"lockfile": 1`, `"lockfile": 2`, "format 2 is not supported"},
		{"requires edited", `"tool<2"`, `"tool<3"`, "are not the digest of its requires"},
		{"digest edited", `"inputs": "sha256:`, `"inputs": "sha256:0`, "are not the digest of its requires"},
		{"unsorted", appLine + ",\n    " + libLine, libLine + ",\n    " + appLine, "packages[1]: app is out of order"},
		{"twice", libLine, libLine + ",\n    " + libLine, "packages[2]: lib is out of order or listed twice"},
		{"relative url", `"https://example.com/repo/lib-1.5.tar"`, `"lib-1.5.tar"`, `url "lib-1.5.tar" is not an absolute`},
		{"credentials in url", `https://example.com/repo/lib`, `https://u:p@example.com/repo/lib`, "is not an absolute"},
		{"ftp url", `https://example.com/repo/lib`, `ftp://example.com/repo/lib`, "is not an absolute"},
		{"file directory url", `https://example.com/repo/lib-1.5.tar`, `file:///repo/`, "is not an absolute"},
		{"bad sha256", `"sha256":"` + testSum + `"}`, `"sha256":"` + strings.ToUpper(testSum) + `"}`, "is not 64 lowercase hex digits"},
		{"bad name", `"name":"lib"`, `"name":"_lib"`, `bad package name "_lib"`},
		{"capitals not npm", `"name":"lib"`, `"name":"Lib"`, `package "Lib": a name with capitals is an old npm package's`},
		{"bad version", `"version":"1.5"`, `"version":"V1.5"`, `bad version "V1.5"`},
		{"bad depends", `"lib>=1,<2"`, `"lib>=1,,<2"`, `depends: requirement "lib>=1,,<2"`},
		{"negative size", `"size":0,"sha256":"` + testSum + `"}`, `"size":-1,"sha256":"` + testSum + `"}`, "package lib@1.5: negative size -1"},
		{"huge size", `"size":0,"sha256":"` + testSum + `"}`, `"size":9223372036854775807,"sha256":"` + testSum + `"}`, "package lib@1.5: size 9223372036854775807 is over the limit of 512 GiB"},
		{"huge installed_size", `"size":0,"sha256":"` + testSum + `"}`, `"size":0,"installed_size":274877906945,"sha256":"` + testSum + `"}`, "package lib@1.5: installed_size 274877906945 is over the limit of 256 GiB"},
		{"negative files", `"size":0,"sha256":"` + testSum + `"}`, `"size":0,"files":-2,"sha256":"` + testSum + `"}`, "package lib@1.5: negative files -2"},
		{"huge index version", `"inputs": `, `"index": {"name":"demo","version":9007199254740992,"keys":["0123456789abcdef"]}, "inputs": `, "want the name, version (1 to 9007199254740991)"},
		{"key id not one", `"inputs": `, `"index": {"name":"demo","version":2,"keys":["0123456789abcdef\npkg: note: fine"]}, "inputs": `, `"keys":["0123456789abcdef\npkg: note: fine"]`},
		{"missing dependency", ",\n    " + libLine, "", `package "lib" not found (required by app 1.0)`},
		{"unsatisfied dependency", `"version":"1.5","url":"https://example.com/repo/lib-1.5.tar"`, `"version":"2.5","url":"https://example.com/repo/lib-2.5.tar"`, `no version of "lib" satisfies lib>=1,<2 (required by app 1.0)`},
		{"not required", libLine, libLine + `,{"name":"more","version":"1","url":"https://example.com/more-1.tar","size":0,"sha256":"` + testSum + `"}`, "more 1 is locked but not required"},
		{"not json", `"lockfile": 1,`, `"lockfile": 1`, "invalid character"},
		{"bad repository name", `"inputs": `, `"name": "_private", "inputs": `, `name: bad repository name "_private"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("%q is not in the lockfile:\n%s", tt.old, good)
			}
			_, err := decodeLock([]byte(relock(strings.Replace(good, tt.old, tt.new, 1))))
			if !errors.Is(err, ErrLockfile) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "repo: lockfile") {
				t.Errorf("decodeLock: got error %v, want an ErrLockfile naming %q without the sentinel's words", err, tt.want)
			}
		})
	}
	unlocked := regexp.MustCompile(`(?m)^  "locked": .*\n`).ReplaceAllString(full, "")
	if _, err := decodeLock([]byte(unlocked)); !errors.Is(err, ErrLockfile) || !strings.Contains(err.Error(), `"locked"`) {
		t.Errorf("decodeLock of a lockfile without a locked digest: %v", err)
	}
	// With it, a package line edited by hand is refused, but not a URL moved to a mirror.
	edited := strings.Replace(full, `"version":"1.5"`, `"version":"1.6"`, 1)
	if _, err := decodeLock([]byte(edited)); !errors.Is(err, ErrLockfile) || !errors.Is(err, ErrLockEdited) {
		t.Errorf("decodeLock of an edited version: %v", err)
	}
	mirror := strings.ReplaceAll(full, "https://example.com/repo/", "https://mirror.example.org/pkg/")
	if _, err := decodeLock([]byte(mirror)); err != nil {
		t.Errorf("decodeLock with the URLs on a mirror: %v", err)
	}
	big := strings.Replace(good, `"repo": "`, `"repo": "`+strings.Repeat("x", maxLockSize), 1)
	if _, err := decodeLock([]byte(big)); !errors.Is(err, ErrLockfile) || !errors.Is(err, ErrLimit) {
		t.Errorf("decodeLock of %d bytes: %v", len(big), err)
	}
}

// TestLockUnresolved: the requirements an index no longer meets are each that does not
// resolve alone, or all where each does but not together; none where they resolve, if to
// other packages.
func TestLockUnresolved(t *testing.T) {
	l := testLock(t, lockIndex, "app", "tool<2")
	for _, tt := range []struct {
		name  string
		index []string
		want  string
	}{
		{"same", lockIndex, ""},
		{"newer dependency", append(lockIndex, "lib 1.9"), ""},
		{"dependency gone", []string{"app 1.0 lib>=1,<2", "lib 2.5", "tool 1.0"}, "app"},
		{"version gone", []string{"app 1.0 lib>=1,<2", "lib 1.5", "tool 2.0"}, "tool<2"},
		{"not together", []string{"app 1.0 lib>=1,<2", "lib 1.5", "tool 1.0 conflicts:app"}, "app tool<2"},
	} {
		if got := JoinRequirements(l.Unresolved(testIndex(tt.index...))); got != tt.want {
			t.Errorf("%s: Unresolved = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLockOutdated(t *testing.T) {
	l := testLock(t, lockIndex, "app", "tool<2")
	tests := []struct {
		name        string
		index       []string
		locked, now string // the *staleError's packages, as "name version"; both "" when current
		cause       error  // or its Err
	}{
		{"same", lockIndex, "", "", nil},
		{"unrelated addition", append(lockIndex, "other 1", "lib 3.0"), "", "", nil},
		{"newer version", append(lockIndex, "tool 1.1"), "tool 1.0", "tool 1.1", nil},
		{"newer dependency", append(lockIndex, "lib 1.9"), "lib 1.5", "lib 1.9", nil},
		{"version withdrawn", []string{"app 1.0 lib>=1,<2", "lib 1.4", "tool 1.0"}, "lib 1.5", "lib 1.4", nil},
		{"new dependency", []string{"app 1.0 lib>=1,<2 z", "z 1", "lib 1.5", "tool 1.0"}, "", "z 1", nil},
		{"dropped dependency", []string{"app 1.0", "lib 1.5", "tool 1.0"}, "lib 1.5", "", nil},
		{"unresolvable", []string{"app 1.0 lib>=1,<2", "tool 1.0"}, "", "", &MissingError{Name: "lib", By: "app 1.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.Outdated(testIndex(tt.index...))
			var se *staleError
			switch {
			case tt.locked == "" && tt.now == "" && tt.cause == nil && err != nil:
				t.Errorf("Outdated: %v", err)
			case tt.cause != nil && (!errors.As(err, &se) || !sameError(se.Err, tt.cause)):
				t.Errorf("Outdated: got %#v, want a *staleError for %#v", err, tt.cause)
			case tt.cause == nil && (tt.locked != "" || tt.now != "") && !stale(err, "", tt.locked, tt.now):
				t.Errorf("Outdated: got %#v, want a *staleError of %q and %q", err, tt.locked, tt.now)
			}
		})
	}
	// A locked pre-release is in use: a lock made when the index had no release, or by a
	// pkg that took pre-releases first, stays current until a newer version comes.
	pre := testLock(t, []string{"jq 2.0-rc1"}, "jq")
	if err := pre.Outdated(testIndex("jq 1.7", "jq 2.0-rc1")); err != nil {
		t.Errorf("Outdated with a locked pre-release and an older release: %v", err)
	}
	if err := pre.Outdated(testIndex("jq 1.7", "jq 2.0-rc1", "jq 2.0")); !stale(err, "", "jq 2.0-rc1", "jq 2.0") {
		t.Errorf("Outdated with the locked pre-release's release out: %v", err)
	}
	// Locking again moves it on to a later pre-release, as install would, not back.
	if got, err := pre.Resolve(testIndex("jq 1.7", "jq 2.0-rc1", "jq 2.0-rc2"), pre.Requires); err != nil || ids(got) != "jq 2.0-rc2" {
		t.Errorf("Resolve for a lock with jq 2.0-rc1 = %q, %v; want jq 2.0-rc2", ids(got), err)
	}
	changed := testIndex(lockIndex...)
	changed.Packages[1].SHA256 = strings.Repeat("cd", 32)
	var se *staleError
	if err := l.Outdated(changed); !stale(err, "", "lib 1.5", "lib 1.5") || !errors.As(err, &se) || se.Locked.SHA256 != testSum || se.Now.SHA256 != changed.Packages[1].SHA256 {
		t.Errorf("Outdated with lib's archive changed: %v", err)
	}
}

// TestLockOutdatedNames: where several packages resolve otherwise now (a security update
// of a program and its library), the error names each of them, not the first alone, and
// past maxStaleNamed, how many more.
func TestLockOutdatedNames(t *testing.T) {
	l := testLock(t, lockIndex, "app", "tool<2")
	err := l.Outdated(testIndex(append(lockIndex, "tool 1.1", "lib 1.9")...))
	var se *staleError
	if !stale(err, "", "lib 1.5", "lib 1.9") || !errors.As(err, &se) || len(se.Also) != 1 ||
		se.Also[0].Locked.Version != "1.0" || se.Also[0].Now.Name != "tool" || se.Also[0].Now.Version != "1.1" {
		t.Fatalf("Outdated with lib 1.9 and tool 1.1 out: %#v, want lib 1.5 to 1.9, also tool 1.0 to 1.1", err)
	}
	want := "lockfile is out of date: lib is locked at 1.5, the index now resolves 1.9; and tool is locked at 1.0, the index now resolves 1.1"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}

	many := &staleError{Locked: Package{Name: "p0", Version: "1"}}
	for i := 1; i <= maxStaleNamed+2; i++ {
		many.Also = append(many.Also, staleError{Locked: Package{Name: fmt.Sprintf("p%d", i), Version: "1"}})
	}
	if got := many.Error(); !strings.Contains(got, "; p5 1 is locked and no longer required; and 2 more") || strings.Contains(got, "p6") {
		t.Errorf("Error() = %q, want p0 to p5 named and 2 more", got)
	}
}

// TestLockOutdatedNPM: a locked npm package the index now resolves to another version is
// said to be locked at one version and resolved at the other, as any package is, not
// taken for a new package (an npm instance's key holds its version), nor named again as no
// longer required.
func TestLockOutdatedNPM(t *testing.T) {
	old := npmTestIndex(t, "ms 2.1.2", "debug 4.3.4 ms@2.1.2")
	pkgs, err := old.Resolve(parseReqs(t, "debug"))
	if err != nil {
		t.Fatal(err)
	}
	l := NewLock("file:///r/", parseReqs(t, "debug"), pkgs)
	ix := npmTestIndex(t, "ms 2.1.2", "ms 2.1.3", "debug 4.3.4 ms@2.1.2", "debug 4.4.0 ms@^2.1.3")
	err = l.Outdated(ix)
	if !stale(err, "", "debug 4.3.4", "debug 4.4.0") {
		t.Fatalf("Outdated with debug 4.4.0 out: %v, want debug locked at 4.3.4, resolved at 4.4.0", err)
	}
	// Each moved instance is named once, as moved, not also as no longer required.
	want := "lockfile is out of date: debug is locked at 4.3.4, the index now resolves 4.4.0; and ms is locked at 2.1.2, the index now resolves 2.1.3"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

// stale reports whether err is a *staleError for platform of the package locked
// and the one the index resolves now, each as "name version" or "" for none.
func stale(err error, platform, locked, now string) bool {
	id := func(p Package) string {
		if p.Name == "" {
			return ""
		}
		return p.Name + " " + p.Version
	}
	var se *staleError
	return errors.As(err, &se) && se.Err == nil && se.Platform == platform && id(se.Locked) == locked && id(se.Now) == now
}

// TestStaleErrorText checks the words of each kind of *staleError.
func TestStaleErrorText(t *testing.T) {
	lib := Package{Name: "lib", Version: "1.5", SHA256: testSum}
	for _, tt := range []struct {
		e    staleError
		want string
	}{
		{staleError{Locked: lib, Now: Package{Name: "lib", Version: "1.9"}}, "lockfile is out of date: lib is locked at 1.5, the index now resolves 1.9"},
		{staleError{Platform: "linux-amd64", Now: Package{Name: "z", Version: "1"}}, "lockfile is out of date: for linux-amd64: z 1 is now required and not locked"},
		{staleError{Locked: lib}, "lockfile is out of date: lib 1.5 is locked and no longer required"},
		{staleError{Locked: lib, Now: Package{Name: "lib", Version: "1.5", SHA256: "cd"}}, "lockfile is out of date: lib 1.5 is locked with sha256 " + testSum + ", the index now has cd"},
		{staleError{Err: &MissingError{Name: "lib", By: "app 1.0"}}, `lockfile is out of date: its requirements no longer resolve: package "lib" not found (required by app 1.0)`},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// FuzzParseLock checks that decodeLock does not panic and that what it accepts encodes to
// a lockfile it reads back the same.
func FuzzParseLock(f *testing.F) {
	f.Add(encodeLock(f, testLock(f, lockIndex, "app", "tool<2")))
	f.Add(encodeLock(f, NewLock(testRepoURL, nil, nil)))
	f.Add(encodeLock(f, platformLock(f, "hello", "libgreet")))
	f.Add(strings.Replace(encodeLock(f, testLock(f, lockIndex, "lib")), `"size":0`, `"size":9223372036854775807`, 1))
	f.Fuzz(func(t *testing.T, text string) {
		l, err := decodeLock([]byte(text))
		if err != nil {
			return
		}
		back, err := decodeLock([]byte(encodeLock(t, l)))
		if err != nil || !reflect.DeepEqual(withoutOrders(back), withoutOrders(l)) {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, l)
		}
	})
}

// TestParseLockSays checks the errors for files that are not lockfiles or not JSON: they
// say what the file is, or where the JSON breaks.
func TestParseLockSays(t *testing.T) {
	good := encodeLock(t, testLock(t, lockIndex, "app"))
	for _, tt := range []struct{ data, want string }{
		{`{"format": 1, "packages": []}`, `not a lockfile: no "lockfile" format number`},
		{`{"format": 1, "packages": 5}`, `not a lockfile: no "lockfile" format number`},
		{`{"lockfile": 2, "packages": {"a": 1}}`, "format 2 is not supported"},
		{good[:len(good)/2], "JSON ends early, after"},
		{strings.Replace(good, `"requires": [`, `"requires": [,`, 1), "line 6, column 17: invalid character ','"},
		{strings.Replace(good, `"size":0`, `"size":"0"`, 1), "line 10, column "},
	} {
		if _, err := decodeLock([]byte(tt.data)); !errors.Is(err, ErrLockfile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decodeLock: %v, want an ErrLockfile containing %q", err, tt.want)
		}
	}
	for _, format := range []int{2, -1} {
		_, err := decodeLock([]byte(`{"lockfile": ` + strconv.Itoa(format) + `, "packages": {"a": 1}}`))
		want := FormatError{Format: format, Newest: lockFormat}
		if fe := (*FormatError)(nil); !errors.Is(err, ErrLockfile) || !errors.Is(err, ErrFormat) || !errors.As(err, &fe) || *fe != want {
			t.Errorf("decodeLock of format %d that lockFile cannot hold: %v, want ErrFormat in a %+v", format, err, want)
		}
	}
}

// TestLockRelations checks that a lockfile carries provides, conflicts, replaces, into
// and alternatives, so that a sync installs what the index said.
func TestLockRelations(t *testing.T) {
	ix := testIndex("curl 8 libz1 debconf>=0.5|debconf-2.0 conflicts:curl-old<8 replaces:curl-old",
		"zlib1g 1:1.2 provides:libz1=1:1.2", "debconf 1.5")
	ix.Packages[0].Into = "opt/curl"
	pkgs, err := ix.Resolve(parseReqs(t, "curl"))
	if err != nil {
		t.Fatal(err)
	}
	l := NewLock(testRepoURL, parseReqs(t, "curl"), pkgs)
	for i := range l.Packages {
		l.Packages[i].Archive = testRepoURL + l.Packages[i].Archive
	}
	text := encodeLock(t, l)
	for _, w := range []string{`"depends":["libz1","debconf>=0.5|debconf-2.0"]`, `"conflicts":["curl-old<8"]`, `"replaces":["curl-old"]`,
		`"into":"opt/curl"`, `"provides":["libz1=1:1.2"]`} {
		if !strings.Contains(text, w) {
			t.Errorf("encode:\n%s\nwant %s in it", text, w)
		}
	}
	back, err := decodeLock([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withoutOrders(back), l) {
		t.Errorf("decodeLock(encode(l)) = %+v, want %+v", back, l)
	}
	if order, err := back.Order(); err != nil || ids(order) != "debconf 1.5, zlib1g 1:1.2, curl 8" {
		t.Errorf("Order = %q, %v", ids(order), err)
	}
}

// TestRequestAlternatives checks that alternatives are refused where a request is resolved
// (the command line's, a lockfile's requires): a request is recorded under one name.
func TestRequestAlternatives(t *testing.T) {
	ix := testIndex("a 1", "b 1")
	if _, err := ix.Resolve(parseReqs(t, "a|b")); !errors.Is(err, ErrAlternatives) {
		t.Errorf("Resolve(a|b) = %v, want ErrAlternatives", err)
	}
	if _, err := ix.ResolveInstalled(nil, parseReqs(t, "a|b")); !errors.Is(err, ErrAlternatives) {
		t.Errorf("ResolveInstalled(a|b) = %v, want ErrAlternatives", err)
	}
	l := testLock(t, []string{"a 1"}, "a")
	text := strings.Replace(encodeLock(t, l), `"requires": [
    "a"`, `"requires": [
    "a|b"`, 1)
	l.Requires = parseReqs(t, "a|b")
	text = regexp.MustCompile(`"inputs": "[^"]*"`).ReplaceAllString(text, `"inputs": "`+Inputs(l.Requires)+`"`)
	if _, err := decodeLock([]byte(text)); !errors.Is(err, ErrAlternatives) || !errors.Is(err, ErrLockfile) {
		t.Errorf("decodeLock of requires a|b = %v, want ErrAlternatives", err)
	}
}

// withoutOrders is the decoded lock l without the orders decodeLock kept and the path
// ReadLock kept, to compare with a Lock made in code.
func withoutOrders(l *Lock) *Lock {
	if l == nil {
		return nil
	}
	c := *l
	c.orders, c.path = nil, ""
	return &c
}

// TestOrderKept checks that Order returns what decodeLock's check resolved, without
// resolving again, and a copy that its caller may change.
func TestOrderKept(t *testing.T) {
	back, err := decodeLock([]byte(encodeLock(t, testLock(t, lockIndex, "app"))))
	if err != nil {
		t.Fatal(err)
	}
	want, err := back.Order()
	if err != nil || len(want) != 2 || want[0].Name != "lib" {
		t.Fatalf("Order = %v, %v; want lib, then app", want, err)
	}
	want[0].Name = "changed"
	back.Packages = nil // a resolution now would find nothing
	got, err := back.Order()
	if err != nil || len(got) != 2 || got[0].Name != "lib" || got[1].Name != "app" {
		t.Errorf("Order again = %v, %v; want the kept lib, then app", got, err)
	}
}

// BenchmarkDecodeLock reads a lockfile of an npm tree's size (229 packages): what every
// sync pays before it plans, its digest checks included.
func BenchmarkDecodeLock(b *testing.B) {
	var pkgs []Package
	var rs []Requirement
	for i := range 229 {
		name := fmt.Sprintf("pkg%03d", i)
		pkgs = append(pkgs, Package{Name: name, Version: "1.2.3", Archive: testRepoURL + name + "-1.2.3.tar",
			Size: 12345, SHA256: testSum})
		rs = append(rs, Requirement{Name: name})
	}
	text := encodeLock(b, NewLock(testRepoURL, rs, pkgs))
	if _, err := decodeLock([]byte(text)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeLock([]byte(text)); err != nil {
			b.Fatal(err)
		}
	}
}
