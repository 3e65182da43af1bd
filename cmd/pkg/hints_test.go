package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/pin"
	"pkg/publish"
	"pkg/repo"
	"pkg/runner"
	"pkg/trust"
	"pkg/txn"
)

// TestLibraryErrorHints checks that the facts a library's typed error carries get the
// advice, flags and commands included, from the hint table.
func TestLibraryErrorHints(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("could not update the command links: %w", &install.UnlinkedError{Path: "/r/bin/hello", Package: "hello"}), "then run 'pkg install --reinstall hello'"},
		{&db.AmbiguousError{Op: "reinstall", Name: "debug", Keys: []string{"debug@4.3.1", "debug@4.4.0"}}, "name one as NAME@VERSION: 'pkg install --reinstall debug@4.4.0'"},
		{fmt.Errorf("install: %w", &install.ConflictError{Path: "etc/x", Package: "b", Version: "1", Other: "a", OtherVersion: "2"}), "'pkg remove a' first"},
		{&install.ConflictError{Path: "etc/x", Package: "b", Version: "1", Other: "a", OtherVersion: "2", Incoming: true}, "install one of b and a"},
		{&install.ConflictError{Path: "bin/foo", Package: "d", Version: "1", Other: "c", OtherVersion: "1", Command: true}, "a command link never takes the place of another package's own file in bin/"},
		{&fetch.ReadOnlyError{Dir: "/c", Path: "/c/tmp", Mode: 0o555}, "point --cache (PKG_CACHE) at a directory you can write"},
		{&repo.UnsignedError{Dir: "/srv/repo", Err: os.ErrPermission}, "run 'pkg repo sign /srv/repo'"},
		{fmt.Errorf("repo add: %w", &fetch.ControlError{Package: "a", Field: "Breaks", Relation: "b:i386", Err: errors.New("x")}), "with --conflicts, which replaces the control file's Breaks"},
		{&os.LinkError{Op: "rename", Old: "/r/pkgs/a", New: "/r/.pkg/trash/a", Err: install.ErrSplitRoot}, "must be on one filesystem"},
		{fmt.Errorf("index version 1 of repository r is older than version 2, %w", pin.ErrLockRollback), "a mirror or proxy is serving an old index"},
		{fmt.Errorf("index version 1 of repository r is older than version 2, %w (%w)", pin.ErrLockRollback, fetch.ErrOffline), "offline, the index is the cache's copy"},
		{fmt.Errorf("pkg.lock was made from a signed repository, and this index is %w", pin.ErrLockNotVerified), "--trusted-key"},
		{fmt.Errorf("pkg.lock %w, and signatures are required", pin.ErrLockUnverified), "'pkg lock --trusted-key KEY'"},
		{fmt.Errorf("pkg.lock was made from an index of repository r verified by key k, %w", pin.ErrLockUntrusted), "--trusted-key for one command"},
		{&txn.OutdatedError{Path: "ci.lock", Err: errors.New("repo: lockfile is out of date")}, "run 'pkg lock -o ci.lock' to update it"},
		{&txn.OutdatedError{Path: "ci.lock", Requires: []repo.Requirement{{Repo: "team", Name: "hello", Constraints: []repo.Constraint{{Op: "=", Version: "2.0"}}}, {Name: "tool"}}, Unresolved: []repo.Requirement{{Repo: "team", Name: "hello", Constraints: []repo.Constraint{{Op: "=", Version: "2.0"}}}}, Err: errors.New("repo: lockfile is out of date")},
			"name the packages to lock, team/hello=2.0 by name alone: 'pkg lock -o ci.lock team/hello tool'"},
		{&txn.RepublishedError{Name: "lib", Version: "1"}, "'pkg upgrade lib' takes the repository's"},
		{&runner.CommandError{Package: "golang-1.19-go", Version: "1.19.8-2"},
			"--cmd takes a command's name, not a path: to run one of its files, 'pkg install golang-1.19-go', then run it by its path in the root ('pkg files golang-1.19-go' lists them)"},
		{&trust.PinnedError{Repo: "https://r.example/", Version: 5, KeyIDs: []string{"k1"}, SignedBy: []string{"k1"}}, "so that pkg can check the index's signature"},
		{&trust.PinnedError{Repo: "https://r.example/", Version: 5, KeyIDs: []string{"k1"}, SignedBy: []string{"k2"}}, "if the publisher changed keys"},
		{fmt.Errorf("%w: no saved index of x", fetch.ErrOffline), "to save the repository's index in the cache"},
		{fmt.Errorf("%w: hello 1.0: index damaged; removed from the cache; %w, so it is not fetched again", fetch.ErrDamaged, fetch.ErrOffline), "fetch the package again while online ('pkg fetch NAME...'"},
		{fmt.Errorf("root /r: %w: nothing was ever installed there", install.ErrNoRoot), "check --root (PKG_ROOT)"},
		{&install.LinksError{Dir: "/r", Prefix: true, Err: &os.PathError{Op: "mkdir", Path: "/r/usr", Err: syscall.ENOSPC}}, "free space on the filesystem holding /r, then run 'pkg verify'"},
		{fmt.Errorf("verify: %w", install.ErrNotLinked), "verify again once it is done"},
		{fmt.Errorf("list: %w", &db.FormatError{Path: "/r/.pkg/db", Format: 2, Newest: 1}), "upgrade pkg to a release that reads it"},
		{fmt.Errorf("install: %w", &db.DamagedError{Path: "/my root/.pkg/db", Err: db.ErrStale}), "'pkg --root '/my root' verify --repair' records the packages in /my root/pkgs again"},
		{&publish.NPMLockError{Path: "package-lock.json", Err: fmt.Errorf("%w: lockfileVersion 1", publish.ErrNPMLockVersion)}, "'npm install --package-lock-only'"},
		{&publish.NPMLockError{Path: "package-lock.json", Key: "node_modules/a", Err: publish.ErrNotInNPMCache}, "--npm-cache DIR"},
		{&publish.NPMLockError{Path: "package-lock.json", Key: "packages/a", Err: publish.ErrNPMLocal}, "'npm pack'"},
		{&publish.NPMLockError{Path: "package-lock.json", Key: "node_modules/a", Err: fmt.Errorf("GET u: 404 Not Found: %w", fetch.ErrGone)}, "run 'npm install --package-lock-only' in the project to resolve the lock again"},
		{&publish.NPMLockError{Path: "package-lock.json", Key: "node_modules/a", Err: fmt.Errorf("a 1.0: %w", publish.ErrNPMIntegrity)}, "not the tarball the lock records"},
		{&publish.PushError{What: "r/big-1.0.tar", Size: 3 << 20, Chunk: 2 << 20, Err: publish.ErrTooLarge}, "refused a request's body of 2.0 MiB as too large (a blob over --chunk-size, 2.0 MiB here, goes in chunks of that size): push again with a smaller --chunk-size"},
		{&publish.DownloadError{URL: "https://h/a.tar", Err: fmt.Errorf("GET https://h/a.tar: 404 Not Found: %w", fetch.ErrGone)}, "the server has no file at that URL: check it"},
		{&publish.DownloadError{URL: "https://h/a.tar", Err: fmt.Errorf("GET https://h/a.tar: 403 Forbidden: %w", fetch.ErrDenied)}, "give the URL of an archive anyone may download"},
		{&publish.DownloadError{URL: "https://h/a.tar", Err: fmt.Errorf("GET https://h/a.tar: %w", fetch.ErrUnreachable)}, "check the network, and the URL's host"},
		{&publish.DownloadError{URL: "https://h/a.tar", Err: &fetch.DeniedError{Err: fmt.Errorf("GET https://h/a.tar: 401 Unauthorized: %w", fetch.ErrDenied), URL: true}}, "the server refused the credential in the URL"},
		{&fetch.DeniedError{Err: fetch.ErrDenied, URL: true, Vars: []string{"PKG_REPO_TEAM_"}}, "the repository refused the credential in the URL"},
		{&publish.PushError{Err: &fetch.DeniedError{Err: fetch.ErrDenied, Vars: []string{"PKG_REPO_TOOLS_"}}}, "set PKG_REPO_TOOLS_TOKEN (or PKG_REPO_TOOLS_USERNAME and PKG_REPO_TOOLS_PASSWORD)"},
		{fmt.Errorf("resolve: %w", &repo.ConflictsError{Name: "mawk", Version: "1", Other: "gawk", OtherVersion: "5"}), "mawk and gawk cannot be installed together"},
		{fmt.Errorf("registry h/r: index.json, blob sha256:1: %w", fetch.ErrDigest), "served the repository's index, its signature or its manifest altered"},
		{fmt.Errorf("GET https://repo.exmaple.org/index.json: %w", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "repo.exmaple.org", IsNotFound: true}}),
			"DNS knows no host repo.exmaple.org: check the host of the URL above for a typo (a repository's is in --repo"},
		{&pushUnreachableError{fmt.Errorf("push to oci://h/r:latest/: read the index tagged there: GET u: %w", fetch.ErrUnreachable)}, "check the network, and that the registry named above is up, then push again"},
		{&publish.OlderError{Ref: "oci://h/r:latest/", Version: 10, Tagged: 11}, "push the up-to-date repository directory, the one that signed version 11 (this one may be a stale checkout); a publisher who really started over pushes with --force"},
		{&publish.OlderError{Ref: "oci://h/r:latest/", Version: 11, Tagged: 11}, "every client that accepted version 11 refuses other bytes of that version: push the up-to-date"},
		{&publish.RepositoryError{Ref: "oci://h/r:latest/", Name: "team", Tagged: "main"}, "every client of repository main refuses an index of repository team in its place: check the reference"},
		{fmt.Errorf("push d: %w", publish.ErrNoIndex), "push the directory 'pkg repo add' writes"},
		{&publish.PushError{What: "repo/a.tar", Err: publish.ErrArchiveChanged}, "the file changed since its entry was written"},
		{&publish.SignatureError{Ref: "oci://h/r:latest/"}, "every client that accepted the signed index refuses an unsigned one in its place: sign this one"},
		{fmt.Errorf("add x.deb: %w", &publish.ArchError{Name: "hello", Version: "1", Arch: "x32"}), "say so with --platform OS-ARCH"},
	} {
		if got := hint(tt.err, nil); !strings.Contains(got, tt.want) {
			t.Errorf("hint(%v) = %q, want %q in it", tt.err, got, tt.want)
		}
	}
}

// libraryDirs are pkg's packages that the CLI builds on: none of their messages may name
// one of its flags or commands.
var libraryDirs = []string{"config", "db", "fetch", "install", "cmd/pkg/internal/progress", "repo", "report", "runner", "session", "tarutil", "trust", "txn"}

// TestLibrariesNameNoFlag checks every string literal in the libraries' non-test sources
// for a flag of pkg's ("--cache") or one of its commands ("pkg lock"). A literal without a
// space is not a message: it may be an argument to another program, such as xz's --quiet.
func TestLibrariesNameNoFlag(t *testing.T) {
	app := newApp(nil, nil)
	var words []string
	var addFlags func(flags []cli.Flag)
	addFlags = func(flags []cli.Flag) {
		for _, f := range flags {
			words = append(words, "--"+f.Names()[0])
		}
	}
	addFlags(app.Flags)
	for _, c := range app.Commands {
		addFlags(c.Flags)
		words = append(words, "'pkg "+c.Name, "run pkg "+c.Name, "pkg "+c.Name+" -") // not "a pkg cache"
		for _, s := range c.Subcommands {
			addFlags(s.Flags)
		}
	}
	for _, dir := range libraryDirs {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("sources of %s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, 0) // no comments: they may name flags
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(lit.Value)
				if !strings.Contains(s, " ") {
					return true
				}
				for _, w := range words {
					if containsWord(s, w) {
						t.Errorf("%s: %q names %q", fset.Position(lit.Pos()), s, w)
					}
				}
				return true
			})
		}
	}
}

// messageDirs are the packages whose messages reach a person through the CLI.
var messageDirs = append([]string{"notice", "pin", "publish", "internal/oci"}, libraryDirs...)

// TestLibrariesNameNoPackage checks the messages the libraries' functions word: none starts
// with the name of one of pkg's packages ("install: root R is locked ..."), which means
// nothing to a person who ran "pkg verify". Only the sentinel errors, declared at package
// level, carry their package's name (STYLE), and the errors that carry them word them for
// a person. A panic's words are for pkg's developers.
func TestLibrariesNameNoPackage(t *testing.T) {
	type file struct {
		name string
		ast  *ast.File
	}
	var files []file
	packages := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range messageDirs {
		names, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("sources of %s: %v", dir, err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			packages[f.Name.Name] = true
			files = append(files, file{name, f})
		}
	}
	for _, f := range files {
		for _, decl := range f.ast.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					return !isCall(n, "", "panic")
				case *ast.BasicLit:
					s, _ := strconv.Unquote(n.Value)
					if prefix, _, ok := strings.Cut(s, ": "); n.Kind == token.STRING && ok && packages[prefix] {
						t.Errorf("%s: %q starts with package %s's name", fset.Position(n.Pos()), s, prefix)
					}
				}
				return true
			})
		}
	}
}

// isCall reports whether call calls pkg.name, or the builtin name where pkg is "".
func isCall(call *ast.CallExpr, pkg, name string) bool {
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		return pkg == "" && fun.Name == name
	case *ast.SelectorExpr:
		x, ok := fun.X.(*ast.Ident)
		return ok && x.Name == pkg && fun.Sel.Name == name
	}
	return false
}

// containsWord reports whether s holds w not followed by a letter, digit or dash.
func containsWord(s, w string) bool {
	for i := strings.Index(s, w); i >= 0; {
		end := i + len(w)
		if end == len(s) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-", rune(s[end])) {
			return true
		}
		j := strings.Index(s[end:], w)
		if j < 0 {
			return false
		}
		i = end + j
	}
	return false
}

// TestNoRegexp checks that cmd/pkg, its tests included, matches no text with regular
// expressions: errors are told apart by type.
func TestNoRegexp(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"regexp"` {
				t.Errorf("%s imports regexp", file)
			}
		}
	}
}

// TestFlagErrors checks flags refused before urfave/cli parses them: each named as typed,
// with what it takes, and an environment variable's value by the variable.
func TestFlagErrors(t *testing.T) {
	e := newEnv(t, t.TempDir(), demoRepo)
	for _, tt := range []struct {
		env, args []string
		want      string
	}{
		{nil, []string{"--offline=maybe", "list"}, "pkg: invalid value \"maybe\" for --offline: a boolean\npkg: hint: run 'pkg help' for usage\n"},
		{nil, []string{"install", "--reinstall=x", "hello"}, "pkg: invalid value \"x\" for --reinstall: a boolean\npkg: hint: run 'pkg install --help' for usage\n"},
		{nil, []string{"cache", "list", "--nope"}, "pkg: unknown flag --nope\npkg: hint: run 'pkg cache list --help' for usage\n"},
		{[]string{"PKG_REQUIRE_SIGNED", "sometimes"}, []string{"list"}, "pkg: environment variable PKG_REQUIRE_SIGNED=\"sometimes\" is not a boolean\npkg: hint: set it to 1 or 0 (true and false work too), or unset it\n"},
	} {
		if tt.env != nil {
			t.Setenv(tt.env[0], tt.env[1])
		}
		if _, stderr, code := e.pkg(tt.args...); code != 2 || stderr != tt.want {
			t.Errorf("pkg %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
		if tt.env != nil {
			os.Unsetenv(tt.env[0])
		}
	}
}

// TestNewerFormatHint: a lockfile or index of a format a newer pkg writes is advised an
// upgrade of pkg, not locking again with this one, which would take the format back for
// everyone; one of a format below this pkg's is damaged, and gets the advice of any other
// damaged lockfile (restore it or lock again) or index.
func TestNewerFormatHint(t *testing.T) {
	lockHint := hint(repo.ErrLockfile, nil)
	for _, tt := range []struct {
		lockfile bool
		format   string
		newer    bool
	}{
		{true, "2", true},
		{true, "-1", false},
		{true, "0", false},
		{false, "2", true},
		{false, "-1", false},
		{false, "0", false},
	} {
		var err error
		if tt.lockfile {
			path := filepath.Join(t.TempDir(), "pkg.lock")
			if err := os.WriteFile(path, []byte(`{"lockfile": `+tt.format+`, "requires": ["jq"], "packages": []}`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = repo.ReadLock(path)
		} else {
			_, err = repo.Parse([]byte(`{"format": ` + tt.format + `, "packages": []}`))
		}
		got := hint(err, nil)
		switch upgrade := strings.Contains(got, "upgrade pkg"); {
		case err == nil:
			t.Errorf("lockfile %v, format %s: no error", tt.lockfile, tt.format)
		case tt.newer && (!errors.Is(err, repo.ErrFormat) || !upgrade):
			t.Errorf("lockfile %v, format %s: %v, hint %q; want repo.ErrFormat and the advice to upgrade pkg", tt.lockfile, tt.format, err, got)
		case tt.newer && tt.lockfile != strings.Contains(got, "locking again with this pkg"):
			t.Errorf("lockfile %v, format %s: hint %q; want the warning against locking again for a lockfile alone", tt.lockfile, tt.format, got)
		case !tt.newer && upgrade:
			t.Errorf("lockfile %v, format %s: %v, hint %q; want no advice to upgrade pkg", tt.lockfile, tt.format, err, got)
		case !tt.newer && tt.lockfile && got != lockHint:
			t.Errorf("lockfile format %s: %v, hint %q; want a damaged lockfile's, %q", tt.format, err, got, lockHint)
		}
	}
}

// TestHintCarriesGlobals runs a command whose hint names a pkg command line: it carries
// the --root and --cache given, quoted for a shell, the --offline given, and nothing of a
// command run on the default root and cache, nor what the environment gives.
func TestHintCarriesGlobals(t *testing.T) {
	base := filepath.Join(t.TempDir(), "my pkg")
	lock := filepath.Join(base, "bad.lock")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache home"))
	root, cache := filepath.Join(base, "root"), filepath.Join(base, "cache")
	const advice = " lock -o FILE NAME...'\n"
	for _, tt := range []struct {
		env, args []string
		want      string
	}{
		{nil, []string{"--root", root, "--cache", cache}, "'pkg --root '" + root + "' --cache '" + cache + "'"},
		{nil, []string{"--offline", "--cache", cache, "-q", "-j", "2"}, "'pkg --cache '" + cache + "' --offline"},
		{nil, nil, "'pkg"},
		{[]string{"PKG_ROOT", root}, []string{"--root", root}, "'pkg"}, // the environment's, as given
		{[]string{"PKG_ROOT", root}, []string{"--root", cache}, "'pkg --root '" + cache + "'"},
		{[]string{"PKG_OFFLINE", "1"}, nil, "'pkg"},
	} {
		if tt.env != nil {
			t.Setenv(tt.env[0], tt.env[1])
		}
		var stderr bytes.Buffer
		code := run(append(append([]string{"pkg"}, tt.args...), "sync", "-f", lock), io.Discard, &stderr)
		if want := tt.want + advice; code != 1 || !strings.HasSuffix(stderr.String(), want) {
			t.Errorf("pkg %s sync of a damaged lockfile (%v): exit %d, %q; want the hint ending %q", strings.Join(tt.args, " "), tt.env, code, stderr.String(), want)
		}
		if tt.env != nil {
			os.Unsetenv(tt.env[0])
		}
	}
}

// TestCarry checks what the pkg command lines of advice take of the user's: the global
// options given, but those a line gives itself, and --offline where it is to run online;
// the options of the command run, in a line that runs it again; nothing in what is not
// a command line of pkg's.
func TestCarry(t *testing.T) {
	l := &cmdline{
		globals: [][2]string{{"--root", "'/a b'"}, {"--repo", "r=/x"}, {"--offline", ""}},
		command: "sync", options: []string{"--frozen"}, app: newApp(nil, nil),
	}
	for _, tt := range []struct {
		text   string
		online bool
		want   string
	}{
		{"run 'pkg verify': it", false, "run 'pkg --root '/a b' --repo r=/x --offline verify': it"},
		{"'pkg sync -f x.lock' online", true, "'pkg --root '/a b' --repo r=/x sync --frozen -f x.lock' online"},
		{"'pkg sync -f x.lock --frozen'", true, "'pkg --root '/a b' --repo r=/x sync -f x.lock --frozen'"},
		{"with 'pkg --repo t=LOCATION sync -f x.lock'", false, "with 'pkg --root '/a b' --offline --repo t=LOCATION sync --frozen -f x.lock'"},
		{"'pkg --root '/c d' verify --repair'", false, "'pkg --repo r=/x --offline --root '/c d' verify --repair'"},
		{"'pkg lock -o x.lock' and 'pkg --offline install a'", false, "'pkg --root '/a b' --repo r=/x --offline lock -o x.lock' and 'pkg --root '/a b' --repo r=/x --offline install a'"},
		{"('pkg --version' names it); as pkg lock wrote it", false, "('pkg --version' names it); as pkg lock wrote it"},
		{"'pkg nosuch x'", false, "'pkg nosuch x'"},
		{"'pkg sync -f x.lock --frozenly' then 'pkg sync --frozen'", true, "'pkg --root '/a b' --repo r=/x sync --frozen -f x.lock --frozenly' then 'pkg --root '/a b' --repo r=/x sync --frozen'"},
	} {
		if got := l.carry(tt.text, tt.online); got != tt.want {
			t.Errorf("carry(%q, online %v) =\n%q, want\n%q", tt.text, tt.online, got, tt.want)
		}
	}
	if got := (*cmdline)(nil).carry("'pkg verify'", false); got != "'pkg verify'" {
		t.Errorf("nil carry = %q", got)
	}
}

// TestTipsCarryGlobals: the pkg command lines that errors, notes and tips name outside
// the hint table carry the --root and --cache given too, so that they act on that root.
func TestTipsCarryGlobals(t *testing.T) {
	base := filepath.Join(t.TempDir(), "my pkg")
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache home"))
	root, cache := filepath.Join(base, "root"), filepath.Join(base, "cache")
	carried := "'pkg --root '" + root + "' --cache '" + cache + "'"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sync", "-f", filepath.Join(base, "none.lock")}, carried + " lock NAME...' writes one"},
		{[]string{"trust", "list"}, carried + " trust add KEY' trusts"},
	} {
		var stderr bytes.Buffer
		run(append([]string{"pkg", "--root", root, "--cache", cache}, tt.args...), io.Discard, &stderr)
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("pkg --root --cache %s: %q; want it to name %q", strings.Join(tt.args, " "), stderr.String(), tt.want)
		}
	}
}
