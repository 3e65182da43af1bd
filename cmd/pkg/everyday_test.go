package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/report"
	"pkg/txn"
)

// decode parses out, the output of a --json command, into v and checks its schema.
func decode[T any](t *testing.T, what, out, schema string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields() // every field printed is documented
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	if got := reflect.ValueOf(v).FieldByName("Schema").String(); got != schema {
		t.Errorf("%s: schema %q, want %q", what, got, schema)
	}
	return v
}

// everydayEnv installs app (which needs lib>=1,<2) and tool@1.0 from a repository that
// then gets lib 1.5 and 2.0 and tool 1.10.
func everydayEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib>=1,<2")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, base, dir)
	e.ok("install", "app", "tool@1.0")
	addPackage(t, dir, "lib", "1.5")
	addPackage(t, dir, "lib", "2.0")
	addPackage(t, dir, "tool", "1.10")
	return e
}

func TestOutdated(t *testing.T) {
	e := everydayEnv(t)
	out, _ := e.ok("outdated")
	want := "NAME  INSTALLED  ALLOWED  NEWEST\nlib   1.0        1.5      2.0\ntool  1.0        1.0      1.10\ntool is held by its request tool@1.0\n"
	if out != want {
		t.Errorf("outdated:\n%s\nwant\n%s", out, want)
	}
	out, _ = e.ok("outdated", "--json")
	got := decode[report.Outdated](t, "outdated --json", out, report.OutdatedSchema)
	wantJSON := []report.OutdatedEntry{{Name: "lib", Installed: "1.0", Allowed: "1.5", Newest: "2.0"}, {Name: "tool", Installed: "1.0", Allowed: "1.0", Newest: "1.10", Held: "tool@1.0"}}
	if !reflect.DeepEqual(got.Packages, wantJSON) {
		t.Errorf("outdated --json = %+v, want %+v", got.Packages, wantJSON)
	}
	e.ok("upgrade", "lib")
	e.ok("install", "tool") // asked for without a version now: it moves to 1.10
	if out, _ := e.ok("outdated"); out != "NAME  INSTALLED  ALLOWED  NEWEST\nlib   1.5        1.5      2.0\n" {
		t.Errorf("outdated after upgrading lib and installing tool: %q", out)
	}
	e.ok("upgrade", "app") // lib<2 holds it
	if out, _ := e.ok("outdated"); !strings.Contains(out, "lib   1.5") {
		t.Errorf("outdated after upgrading app: %q", out)
	}
}

func TestWhyAndAutoremove(t *testing.T) {
	e := everydayEnv(t)
	tests := []struct{ name, want string }{
		{"lib", "lib 1.0 is needed by app\n  app -> lib\n"},
		{"app", "app 1.0 was asked for, as app\napp 1.0 is needed by no other installed package\n"},
	}
	for _, tt := range tests {
		if out, _ := e.ok("why", tt.name); out != tt.want {
			t.Errorf("why %s: %q, want %q", tt.name, out, tt.want)
		}
	}
	out, _ := e.ok("why", "--json", "lib")
	w := decode[report.Why](t, "why --json", out, "pkg.why/1")
	if want := (report.Why{Schema: "pkg.why/1", Name: "lib", Version: "1.0", NeededBy: []string{"app"}, Chains: [][]string{{"app", "lib"}}}); !reflect.DeepEqual(w, want) {
		t.Errorf("why --json lib = %+v, want %+v", w, want)
	}
	out, _ = e.ok("why", "--json", "tool")
	if w := decode[report.Why](t, "why --json", out, "pkg.why/1"); w.Requested != "tool@1.0" || len(w.NeededBy) != 0 || w.Chains == nil {
		t.Errorf("why --json tool = %+v, want requested tool@1.0, needed by none", w)
	}
	if _, stderr, code := e.pkg("why", "gone"); code != 1 || !strings.Contains(stderr, "why gone: not installed") {
		t.Errorf("why gone: exit %d, %q", code, stderr)
	}

	if out, _ := e.ok("autoremove"); !strings.HasPrefix(out, "nothing to remove") {
		t.Errorf("autoremove with everything needed: %q", out)
	}
	e.ok("remove", "app")
	if out, _ := e.ok("why", "lib"); !strings.Contains(out, "was not asked for and no installed package needs it") {
		t.Errorf("why lib after removing app: %q", out)
	}
	if out, _ := e.ok("autoremove"); out != "removed lib 1.0\n" {
		t.Errorf("autoremove after removing app: %q", out)
	}
	if got := e.installed(); got != "tool 1.0" {
		t.Errorf("after autoremove: %s, want tool alone", got)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pkgs", "lib")); !os.IsNotExist(err) {
		t.Errorf("pkgs/lib after autoremove: %v", err)
	}
}

// TestInstallAgainRequests checks that installing a dependency by name makes it asked
// for: autoremove keeps it once what needed it is gone.
func TestInstallAgainRequests(t *testing.T) {
	e := everydayEnv(t)
	e.ok("install", "lib>=1", "lib<2")
	out, _ := e.ok("why", "--json", "lib")
	if w := decode[report.Why](t, "why --json", out, "pkg.why/1"); w.Requested != "lib>=1,<2" {
		t.Errorf("why lib after installing it by two constraints: requested %q", w.Requested)
	}
	e.ok("remove", "app")
	e.ok("autoremove")
	if got := e.installed(); got != "lib 1.5, tool 1.0" { // named, lib moved to the newest app allows
		t.Errorf("after autoremove: %s", got)
	}
}

// TestInstallDependencyByName: installing by name a package installed as another's
// dependency changes no package but says that it is asked for now, so autoremove keeps it
// (apt's "set to manually installed"); a dry run says it would be, in text and JSON, and
// changes nothing.
func TestInstallDependencyByName(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib")
	e := newEnv(t, base, dir)
	e.ok("install", "app")
	if out, _ := e.ok("install", "--dry-run", "lib"); !strings.HasPrefix(out, "lib 1.0 is already installed, as a dependency: the install would record it as asked for") {
		t.Errorf("install --dry-run lib: %q, want it said recorded as asked for", out)
	}
	out, _ := e.ok("install", "--dry-run", "--json", "lib")
	if p := decode[txn.Plan](t, "install --dry-run --json", out, txn.Schema); len(p.Unchanged) != 1 || !p.Unchanged[0].WasDependency {
		t.Errorf("install --dry-run --json lib: unchanged %+v, want lib kept, was a dependency", p.Unchanged)
	}
	if out, _ := e.ok("info", "lib"); !strings.Contains(out, "requested: no") {
		t.Errorf("info lib after the dry runs: %q, want it not asked for", out)
	}
	if out, _ := e.ok("install", "lib"); out != "lib 1.0 is already installed, as a dependency until now: recorded as asked for, so autoremove keeps it\n" {
		t.Errorf("install lib: %q, want it said recorded as asked for", out)
	}
	if out, _ := e.ok("info", "lib"); !strings.Contains(out, "requested: yes") {
		t.Errorf("info lib after install lib: %q, want it asked for", out)
	}
	if out, _ := e.ok("install", "lib"); out != "lib 1.0 is already installed\n" {
		t.Errorf("install lib again: %q, want it said installed alone", out)
	}
	hint := "pkg: hint: lib was asked for: it stays installed while app needs it, and autoremove keeps it after, as pkg has no command that makes a package asked for a dependency alone (as apt-mark auto does); once nothing needs it, '" + e.cmd("remove lib") + "' takes it\n"
	if _, stderr, code := e.pkg("remove", "lib"); code != 1 || !strings.HasSuffix(stderr, hint) {
		t.Errorf("remove lib under app: exit %d, %q; want a refusal ending %q", code, stderr, hint)
	}
}

// TestInstallDependencyFailed: an install that names a dependency and fails, here on
// another package's missing archive, records no request and says it records none.
func TestInstallDependencyFailed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib")
	gone := addPackage(t, dir, "gone", "1.0")
	if err := os.Remove(filepath.Join(dir, gone.Archive)); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, base, dir)
	e.ok("install", "app")
	if out, stderr, code := e.pkg("install", "lib", "gone"); code != 1 || strings.Contains(out+stderr, "recorded") {
		t.Errorf("install lib gone, gone's archive missing: exit %d, %q, %q; want a failure that records nothing", code, out, stderr)
	}
	if out, _ := e.ok("info", "lib"); !strings.Contains(out, "requested: no") {
		t.Errorf("info lib after the failed install: %q, want it not asked for", out)
	}
}

func TestInfoNotInstalled(t *testing.T) {
	e := everydayEnv(t)
	out, _ := e.ok("info", "lib")
	if !strings.Contains(out, "requested: no (installed as a dependency)\n") {
		t.Errorf("info lib: %q", out)
	}
	e.ok("remove", "app")
	e.ok("autoremove")
	out, _ = e.ok("info", "lib")
	for _, want := range []string{"name:      lib\nversion:   2.0\n", "installed: no ('" + e.cmd("install lib") + "' installs it)\n", "versions:  2.0, 1.5, 1.0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("info of lib, not installed:\n%s\nwant %q", out, want)
		}
	}
	out, _ = e.ok("info", "--json", "app")
	info := decode[report.Info](t, "info --json", out, "pkg.info/1")
	if info.Installed || info.Version != "1.0" || !reflect.DeepEqual(info.Depends, []string{"lib>=1,<2"}) || info.ArchiveSize == 0 || info.InstalledAt != nil {
		t.Errorf("info --json app, not installed = %+v", info)
	}
	out, _ = e.ok("info", "--json", "tool")
	if info := decode[report.Info](t, "info --json", out, "pkg.info/1"); !info.Installed || info.Requested != "tool@1.0" ||
		info.Directory != filepath.Join(e.root, "pkgs", "tool") || info.InstalledAt == nil || info.Files != 3 {
		t.Errorf("info --json tool = %+v", info)
	}
}

func TestSearchMarksInstalled(t *testing.T) {
	e := everydayEnv(t)
	out, _ := e.ok("search")
	want := "app   1.0 [installed]\nlib   2.0 [installed: 1.0]\ntool  1.10 [installed: 1.0]\n"
	if out != want {
		t.Errorf("search:\n%s\nwant\n%s", out, want)
	}
	e.ok("install", "tool") // asked for without a version now: it moves to 1.10
	out, _ = e.ok("search", "--json", "to")
	s := decode[report.Search](t, "search --json", out, "pkg.search/1")
	if want := []report.Found{{Name: "tool", Version: "1.10", Installed: "1.10"}}; s.Query != "to" || !reflect.DeepEqual(s.Packages, want) {
		t.Errorf("search --json to = %+v, want %+v", s, want)
	}
	if out, _ := e.ok("search", "tool"); out != "tool  1.10 [installed]\n" {
		t.Errorf("search tool: %q", out)
	}
}

// TestSearchNothing: a word nothing matches fails as grep does, --json or not; the JSON
// document, with no packages, is printed all the same.
func TestSearchNothing(t *testing.T) {
	e := everydayEnv(t)
	if out, stderr, code := e.pkg("search", "zzz"); code != 1 || out != "" || !strings.Contains(stderr, `matches "zzz"`) {
		t.Errorf("search zzz: exit %d, stdout %q, stderr %q; want exit 1 and an error", code, out, stderr)
	}
	out, stderr, code := e.pkg("search", "--json", "zzz")
	if s := decode[report.Search](t, "search --json", out, "pkg.search/1"); code != 1 || len(s.Packages) != 0 || !strings.Contains(stderr, `matches "zzz"`) {
		t.Errorf("search --json zzz: exit %d, %+v, stderr %q; want exit 1, no packages and an error", code, s, stderr)
	}
}

func TestListFilesVerifyJSON(t *testing.T) {
	e := everydayEnv(t)
	out, _ := e.ok("list", "--json")
	l := decode[report.List](t, "list --json", out, "pkg.list/1")
	var got []string
	for _, p := range l.Packages {
		got = append(got, p.Name+" "+p.Version+" "+map[bool]string{true: "requested", false: "dependency"}[p.Requested])
		if p.Files != 3 || p.Size == 0 || p.InstalledAt.IsZero() {
			t.Errorf("list --json: %+v", p)
		}
	}
	if want := []string{"app 1.0 requested", "lib 1.0 dependency", "tool 1.0 requested"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list --json = %v, want %v", got, want)
	}

	out, _ = e.ok("files", "--json", "tool")
	f := decode[report.Files](t, "files --json", out, "pkg.files/1")
	byPath := make(map[string]report.File)
	for _, x := range f.Files {
		byPath[x.Path] = x
	}
	if b := byPath["bin/tool"]; f.Name != "tool" || f.Version != "1.0" || b.Type != "file" || b.Mode != "0755" || b.Size == 0 || len(b.SHA256) != 64 {
		t.Errorf("files --json tool: %+v, bin/tool %+v", f, b)
	}
	if d := byPath["bin"]; d.Type != "dir" || d.SHA256 != "" {
		t.Errorf("files --json tool: bin is %+v", d)
	}

	out, _ = e.ok("verify", "--json")
	if v := decode[report.Verify](t, "verify --json", out, "pkg.verify/1"); v.Packages != 3 || v.Files != 9 || v.Problems == nil || len(v.Problems) != 0 {
		t.Errorf("verify --json = %+v", v)
	}
	if err := os.Remove(filepath.Join(e.root, "pkgs", "tool", "share", "tool", "version")); err != nil {
		t.Fatal(err)
	}
	out, _, code := e.pkg("verify", "--json", "tool")
	v := decode[report.Verify](t, "verify --json", out, "pkg.verify/1")
	want := []report.Problem{{Package: "tool", Version: "1.0", Path: "share/tool/version", InRoot: "share/tool/version", Kind: "missing"}}
	if code != 1 || v.Packages != 1 || !reflect.DeepEqual(v.Problems, want) {
		t.Errorf("verify --json of a missing file: exit %d, %+v", code, v)
	}
}

// TestPathHint checks the note on a root whose bin/ is not on PATH: said after the first
// install, not after the next, and not at all where bin/ is on PATH.
func TestPathHint(t *testing.T) {
	const hint = "is not on PATH; to run the commands pkg installs there"
	dir := syncRepo(t)
	e := newEnv(t, t.TempDir(), dir)
	t.Setenv("PATH", "/usr/bin:/bin")
	_, stderr := e.ok("install", "tool")
	want := "pkg: note: " + filepath.Join(e.root, "bin") + " " + hint + ", add it in your shell's profile: export PATH=" + filepath.Join(e.root, "bin") + `:"$PATH"` + "\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("first install: %q, want %q", stderr, want)
	}
	if _, stderr := e.ok("install", "extra"); strings.Contains(stderr, hint) {
		t.Errorf("second install: %q, want no PATH note", stderr)
	}

	on := newEnv(t, t.TempDir(), dir)
	if err := os.MkdirAll(filepath.Join(on.root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "/usr/bin:"+filepath.Join(on.root, "bin")+"/")
	if _, stderr := on.ok("install", "tool"); strings.Contains(stderr, hint) {
		t.Errorf("install with bin/ on PATH: %q", stderr)
	}
	t.Setenv("PATH", "/usr/bin")
	if _, stderr := on.ok("--quiet", "install", "extra"); strings.Contains(stderr, hint) {
		t.Errorf("install --quiet: %q", stderr)
	}
	if _, stderr := on.ok("install", "app"); !strings.Contains(stderr, hint) {
		t.Errorf("install once bin/ left PATH: %q, want the note", stderr)
	}
}

func TestCompletion(t *testing.T) {
	e := everydayEnv(t)
	for _, tt := range []struct{ shell, want string }{
		{"bash", "complete -o default -F _pkg pkg\n"},
		{"zsh", "#compdef pkg\n"},
		{"fish", "complete -c pkg -n '__fish_pkg_no_subcommand' -l root -r -d 'install root'\n"},
	} {
		out, _ := e.ok("completion", tt.shell)
		if !strings.Contains(out, tt.want) {
			t.Errorf("completion %s: want %q in\n%s", tt.shell, tt.want, out)
		}
		if sh, err := exec.LookPath(tt.shell); err == nil { // the script parses
			if out, err := exec.Command(sh, "-n", "-c", out).CombinedOutput(); err != nil {
				t.Errorf("%s -n of its script: %v\n%s", tt.shell, err, out)
			}
		}
	}
	if !strings.Contains(mustOut(e.ok("completion", "fish")), "-a 'outdated'") {
		t.Error("completion fish lacks the outdated command")
	}
	if _, stderr, code := e.pkg("completion", "tcsh"); code != 2 || !strings.Contains(stderr, `no completion for shell "tcsh"`) {
		t.Errorf("completion tcsh: exit %d, %q", code, stderr)
	}
	if out := e.complete(); !strings.Contains(out, "\noutdated\nwhy\nautoremove\ncompletion\n") {
		t.Errorf("the commands completed: %q", out)
	}
	for _, cmd := range []string{"info", "why", "files", "verify", "remove", "upgrade"} {
		if out := e.complete(cmd); out != "app\nlib\ntool\n" {
			t.Errorf("%s completes %q, want the installed names", cmd, out)
		}
	}
}

func mustOut(stdout, _ string) string { return stdout }

// complete runs pkg ARGS --generate-bash-completion with os.Args set to its arguments,
// where urfave/cli reads the word completed from.
func (e *env) complete(args ...string) string {
	e.t.Helper()
	full := append([]string{"pkg", "--root", e.root, "--cache", e.cache, "--repo", e.repo}, args...)
	full = append(full, "--generate-bash-completion")
	saved := os.Args
	defer func() { os.Args = saved }()
	os.Args = full
	var out, stderr strings.Builder
	if code := run(full, &out, &stderr); code != 0 {
		e.t.Fatalf("completing %v: exit %d, %s", args, code, stderr.String())
	}
	return out.String()
}

// TestBashCompletion sources the bash script and completes with the pkg command built.
func TestBashCompletion(t *testing.T) {
	e := everydayEnv(t)
	complete := bashCompleter(t, e)
	tests := []struct{ words, want string }{
		{"pkg out", "outdated"},
		{"pkg why --j", "--json"},
		{"pkg --root " + e.root + " why t", "tool"},
		// "--" alone is a long flag begun, not the end of pkg's flags
		{"pkg install --", "--reinstall\n--name\n--version\n--depends\n--bin\n--lib\n--dry-run\n--json\n--help"},
		{"pkg verify --", "--full\n--repair\n--json\n--help"},
		{"pkg list --", "--json\n--help"},
		{"pkg cache prune --", "--older-than\n--max-size\n--help"},
		{"pkg sync -f ", ""}, // -f's value: bash's -o default completes the file names
	}
	for _, tt := range tests {
		if got := complete(tt.words); got != tt.want+"\n" {
			t.Errorf("completing %q: %q; want %q", tt.words, got, tt.want)
		}
	}
}

// TestZshCompletion runs the zsh script's _pkg with zsh's completion builtins stood in for
// by functions that print what they are given: compadd the words offered that begin with
// the word completed, as zsh's does, and _files a mark.
func TestZshCompletion(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed")
	}
	e := everydayEnv(t)
	script := filepath.Join(t.TempDir(), "_pkg")
	if err := os.WriteFile(script, []byte(mustOut(e.ok("completion", "zsh"))), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := testfs.PkgBinary(t)
	for _, tt := range []struct{ words, want string }{
		{"pkg install --", "--reinstall\n--name\n--version\n--depends\n--bin\n--lib\n--dry-run\n--json\n--help\n"},
		{"pkg cache prune --", "--older-than\n--max-size\n--help\n"},
		{"pkg install --d", "--depends\n--dry-run\n"},
		{"pkg --root " + e.root + " why t", "tool\n"},
		{"pkg install ./", "<files>\n"},
	} {
		words := strings.Split(tt.words, " ")
		words[0] = bin
		cmd := exec.Command("zsh", "-f", "-c", `compdef() { :; }; compadd() { print -rl -- ${(M)${(P)2}:#${(b)PREFIX}*}; }; _files() { print -r -- '<files>'; }
source "$1"; shift; words=("$@"); CURRENT=$#; PREFIX=$words[CURRENT]; _pkg`, "zsh", script)
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != tt.want {
			t.Errorf("completing %q: %v, %q; want %q", tt.words, err, out, tt.want)
		}
	}
}

// TestFishCompletion completes with fish and the fish script: commands, and no file
// names, where pkg expects a command; file names where a command takes a file.
func TestFishCompletion(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	e := everydayEnv(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "pkg.fish")
	if err := os.WriteFile(script, []byte(mustOut(e.ok("completion", "fish"))), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line  string
		want  []string // the words offered, each before its description
		files bool     // whether pkg.fish, the file in the directory, is offered
	}{
		{"pkg ", []string{"install", "cache", "completion"}, false},
		{"pkg cache ", []string{"clean", "list", "prune"}, false},
		{"pkg repo ", []string{"add", "sign"}, false},
		{"pkg trust ", []string{"add", "list", "remove"}, false},
		{"pkg install ", []string{"app", "lib", "tool"}, true},
		{"pkg remove ", []string{"app", "lib", "tool"}, false},
		{"pkg sync -f ", nil, true},
		{"pkg lock -o ", nil, true},
		{"pkg repo add ", nil, true},
	} {
		cmd := exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, script, tt.line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(testfs.PkgBinary(t))+":"+os.Getenv("PATH"),
			"PKG_ROOT="+e.root, "PKG_CACHE="+e.cache, "PKG_REPO="+e.repo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", tt.line, err, out)
		}
		var got []string
		for line := range strings.Lines(string(out)) {
			word, _, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
			got = append(got, word)
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("completing %q: %q, want %q in it", tt.line, got, w)
			}
		}
		if slices.Contains(got, "pkg.fish") != tt.files {
			t.Errorf("completing %q: %q; want file names %v", tt.line, got, tt.files)
		}
	}
}

// TestBashCompletionNames completes, through the bash script, the installed packages'
// names where a command takes them and the offered ones after install and fetch, read from
// the cache's copy of the index with the repository gone; never urfave/cli's help command
// ("help", "h") where a name or a file is expected.
func TestBashCompletionNames(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "lib", "1.0")
	addPackage(t, dir, "app", "1.0", "lib>=1,<2")
	addPackage(t, dir, "tool", "1.0")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	e := newEnv(t, base, srv.URL)
	e.ok("install", "app")
	srv.Close() // from here on, only the cache has the index
	complete := bashCompleter(t, e)
	global := "pkg --root " + e.root + " --cache " + e.cache + " --repo " + e.repo + " "
	tests := []struct{ words, want string }{
		{global + "remove ", "app\nlib\n"},
		{global + "remove a", "app\n"},
		{global + "upgrade ", "app\nlib\n"},
		{global + "upgrade l", "lib\n"},
		{global + "remove --dry-run ", "app\nlib\n"},
		{global + "remove -n a", "app\n"},
		{global + "remove --dry", "--dry-run\n"},
		{global + "info ", "app\nlib\n"},
		{global + "install ", "app\nlib\ntool\n"},
		{global + "install t", "tool\n"},
		{global + "fetch ", "app\nlib\ntool\n"},
		{global + "install ./", "\n"}, // bash's -o default completes the file names
		{global + "lock ", "\n"},
		{global + "sync ", "\n"},
		{global + "repo add ", "\n"},
		{"pkg --root " + filepath.Join(base, "none") + " remove ", "\n"},
	}
	for _, tt := range tests {
		if got := complete(tt.words); got != tt.want {
			t.Errorf("completing %q: %q; want %q", tt.words, got, tt.want)
		}
	}
}

// bashCompleter returns a function that completes the last of words (split at spaces) as
// bash would with pkg's completion script, and the pkg command built, and returns
// COMPREPLY a line each.
func bashCompleter(t *testing.T, e *env) func(words string) string {
	bin := testfs.PkgBinary(t)
	script := filepath.Join(t.TempDir(), "pkg.bash")
	if err := os.WriteFile(script, []byte(mustOut(e.ok("completion", "bash"))), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(line string) string {
		t.Helper()
		words := strings.Split(line, " ")
		words[0] = bin
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _pkg; printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("completing %q: %v, %s", line, err, out)
		}
		return string(out)
	}
}

// TestAutoremoveWhy checks that autoremove's plan says each orphan is no longer needed,
// in text and JSON, not that the user named it.
func TestAutoremoveWhy(t *testing.T) {
	e := everydayEnv(t)
	e.ok("remove", "app")
	out, _ := e.ok("autoremove", "--dry-run")
	if !strings.HasPrefix(out, "remove lib 1.0 (no longer needed)\n") {
		t.Errorf("autoremove --dry-run: %q, want lib removed as no longer needed", out)
	}
	out, _ = e.ok("autoremove", "--dry-run", "--json")
	plan := decode[txn.Plan](t, "autoremove --dry-run --json", out, txn.Schema)
	if got, want := changes(plan), []string{"remove lib 1.0 (no longer needed)"}; !slices.Equal(got, want) {
		t.Errorf("autoremove --dry-run --json: %q, want %q", got, want)
	}
}
