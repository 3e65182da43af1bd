package session_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pkg/config"
	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/testfs"
	"pkg/pin"
	"pkg/repo"
	"pkg/session"
	"pkg/trust"
	"pkg/txn"
)

// newSession returns a session of o in a new directory, with its root and cache there
// unless o names them, and no configuration but the root's (config).
func newSession(t *testing.T, o session.Options, config string) (*session.Session, *recorder) {
	t.Helper()
	base := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", base)
	if o.Root == "" {
		o.Root = filepath.Join(base, "root")
	}
	if o.Cache == "" {
		o.Cache = filepath.Join(base, "cache")
	}
	if o.Jobs == 0 {
		o.Jobs = 1
	}
	if config != "" {
		if err := os.MkdirAll(filepath.Join(o.Root, ".pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(o.Root, ".pkg", "config.toml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	obs := &recorder{}
	s := session.New(o, obs)
	t.Cleanup(s.Close)
	return s, obs
}

func names(rs []config.Repo) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name+"="+r.URLs[0])
	}
	return out
}

// TestRepositories: the repositories given come before the configured ones; a lockfile's
// take their place (UseLock), and a mistake in those given is returned by what uses them.
func TestRepositories(t *testing.T) {
	const cfg = "[repo.stable]\nurls = [\"https://example.com/stable/\"]\n"
	bad := errors.New("bad --repo")
	for _, tt := range []struct {
		name    string
		o       session.Options
		want    []string
		wantErr error
	}{
		{"configured", session.Options{}, []string{"stable=https://example.com/stable/"}, nil},
		{"given first", session.Options{Repos: []config.Repo{{Name: "mine", URLs: []string{"/srv/mine"}}}},
			[]string{"mine=/srv/mine", "stable=https://example.com/stable/"}, nil},
		{"given is configured", session.Options{Repos: []config.Repo{{URLs: []string{"https://example.com/stable/"}}}},
			[]string{"stable=https://example.com/stable/"}, nil},
		{"invalid", session.Options{Invalid: session.Invalid{Repos: bad}}, []string{"stable=https://example.com/stable/"}, bad},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newSession(t, tt.o, cfg)
			rs, err := s.Repositories()
			if got := names(rs); !slices.Equal(got, tt.want) || !errors.Is(err, tt.wantErr) {
				t.Errorf("Repositories() = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if !session.HasRepos(s) {
				t.Error("HasRepos() = false with repositories configured")
			}
		})
	}
}

// TestNoRepo: a call that needs a repository where none is in effect returns the error
// the command gave, else ErrNoRepo; a name none has is an *UnknownRepoError listing those
// in use.
func TestNoRepo(t *testing.T) {
	mine := errors.New("no repository: give one")
	for _, tt := range []struct {
		noRepo, want error
	}{{nil, session.ErrNoRepo}, {mine, mine}} {
		s, _ := newSession(t, session.Options{NoRepo: tt.noRepo}, "")
		if session.HasRepos(s) {
			t.Error("HasRepos() = true with none")
		}
		if _, _, err := session.OpenFetcher(s, context.Background(), true); !errors.Is(err, tt.want) {
			t.Errorf("OpenFetcher without a repository: %v, want %v", err, tt.want)
		}
		if _, err := session.SourceOf(s, ""); !errors.Is(err, tt.want) {
			t.Errorf("Source(\"\") without a repository: %v, want %v", err, tt.want)
		}
	}
	s, _ := newSession(t, session.Options{Repos: []config.Repo{{Name: "a", URLs: []string{"/srv/a"}}}}, "")
	var ue *session.UnknownRepoError
	if _, err := session.SourceOf(s, "b"); !errors.As(err, &ue) || ue.Name != "b" || !slices.Equal(ue.InUse, []string{"a"}) {
		t.Errorf("Source(b) with a alone: %v", err)
	}
	if src, err := session.SourceOf(s, "a"); err != nil || src.URL() != "file:///srv/a/" {
		t.Errorf("Source(a): %v, %v", src.URL(), err)
	}
}

// TestInvalid: a mistake in the jobs or keys given is returned by the calls that need
// them, jobs first, and by no other.
func TestInvalid(t *testing.T) {
	jobs, keys := errors.New("bad jobs"), errors.New("bad keys")
	s, _ := newSession(t, session.Options{Invalid: session.Invalid{Jobs: jobs, Keys: keys}}, "")
	if _, err := session.SourceOptions(s); err != jobs {
		t.Errorf("SourceOptions: %v, want %v", err, jobs)
	}
	if _, _, err := s.Trusted(); err != keys {
		t.Errorf("Trusted: %v, want %v", err, keys)
	}
	if _, err := s.Repositories(); err != nil {
		t.Errorf("Repositories: %v, want none", err)
	}
	s, _ = newSession(t, session.Options{Invalid: session.Invalid{Keys: keys}}, "")
	if _, err := session.SourceOptions(s); err != keys {
		t.Errorf("SourceOptions: %v, want %v", err, keys)
	}
}

// TestTrusted: the keys given come first, then the root's file; a policy requires
// signatures where asked to.
func TestTrusted(t *testing.T) {
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	given, err := trust.ParseKeySource("given", k.Public().String())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSession(t, session.Options{Keys: []trust.KeySource{given}, RequireSigned: true}, "")
	srcs, _, err := s.Trusted()
	if err != nil || len(srcs) != 2 || srcs[0].Name != "given" || srcs[1].Name != pin.TrustedKeysFile(s.Root) {
		t.Fatalf("Trusted: %+v, %v", srcs, err)
	}
	p, err := session.TrustPolicy(s)
	if err != nil || !p.RequireSigned || len(p.Keys) != 1 {
		t.Errorf("TrustPolicy: %+v, %v", p, err)
	}
}

// TestGivenRepos parses repositories given as [NAME=]LOCATION.
func TestGivenRepos(t *testing.T) {
	for _, tt := range []struct {
		values []string
		want   []string
		err    string
	}{
		{[]string{"/srv/a"}, []string{"=/srv/a"}, ""},
		{[]string{"a=/srv/a", "https://x/b"}, []string{"a=/srv/a", "=https://x/b"}, ""},
		{[]string{"a=/srv/a", "", "/srv/c"}, []string{"=/srv/c"}, ""},
		{[]string{"a="}, nil, `from "a=": no location`},
	} {
		rs, err := session.GivenRepos("from", tt.values...)
		if got := names(rs); !slices.Equal(got, tt.want) || fmt.Sprint(err) != cmpOr(tt.err, "<nil>") {
			t.Errorf("GivenRepos(%q) = %q, %v; want %q, %s", tt.values, got, err, tt.want, tt.err)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestLimits: a prune's limits are those given, else the configuration's; 0 lifts both.
func TestLimits(t *testing.T) {
	const cfg = "[cache]\nmax-size = \"1MiB\"\nolder-than = \"2d\"\n"
	day := 24 * time.Hour
	for _, tt := range []struct {
		given map[string]string
		want  fetch.Limits
		err   string
	}{
		{nil, fetch.Limits{OlderThan: 2 * day, MaxSize: 1 << 20}, ""},
		{map[string]string{"older-than": "1d"}, fetch.Limits{OlderThan: day, MaxSize: 1 << 20}, ""},
		{map[string]string{"max-size": "1KiB"}, fetch.Limits{OlderThan: 2 * day, MaxSize: 1024}, ""},
		{map[string]string{"older-than": "0", "max-size": "1KiB"}, fetch.Limits{}, ""},
		{map[string]string{"older-than": "1d", "max-size": "0"}, fetch.Limits{}, ""},
		{map[string]string{"max-size": "lots"}, fetch.Limits{}, "max-size"},
	} {
		s, _ := newSession(t, session.Options{}, cfg)
		l, err := s.Upkeep().Limits(tt.given)
		var le *session.LimitError
		if l != tt.want || (tt.err == "") != (err == nil) || err != nil && (!errors.As(err, &le) || le.Name != tt.err) {
			t.Errorf("Limits(%v) = %+v, %v; want %+v, error of %q", tt.given, l, err, tt.want, tt.err)
		}
	}
}

// TestNoCache: the cache calls make no cache where there is none, and say so.
func TestNoCache(t *testing.T) {
	s, obs := newSession(t, session.Options{}, "")
	if tr, err := s.Upkeep().Trim(context.Background(), true, fetch.Limits{}); tr != nil || err != nil {
		t.Errorf("Trim without a cache: %+v, %v", tr, err)
	}
	if l, err := s.Upkeep().List(t.Context()); l != nil || err != nil {
		t.Errorf("List without a cache: %+v, %v", l, err)
	}
	if _, err := os.Stat(s.Cache); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Trim or List made the cache: %v", err)
	}
	if want := "note: nothing is cached: no cache at " + s.Cache; !slices.Contains(obs.lines, want) {
		t.Errorf("told %q, want %q", obs.lines, want)
	}
	s.Upkeep().AutoPrune() // no cache was opened: nothing to do
}

// TestDryRun: a dry run's change shows the plan and changes nothing: no root, no cache.
func TestDryRun(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	publish(t, dir, "hello", "1")
	s, obs := newSession(t, session.Options{Repos: []config.Repo{{Name: "r", URLs: []string{dir}}}, DryRun: true}, "")
	shown, err := s.Plan(context.Background(), session.Request{Op: session.Install})
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if _, err := shown.Apply(context.Background()); !errors.Is(err, txn.ErrNotBound) {
		t.Errorf("a dry run's plan applied: %v, want %v", err, txn.ErrNotBound)
	}
	for _, p := range []string{s.Root, s.Cache} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a dry run made %s: %v", p, err)
		}
	}
	s.Upkeep().AutoPrune() // the cache is read-only: nothing to do
	if len(obs.lines) != 1 || !strings.HasPrefix(obs.lines[0], "unverified (local true): repository file://") {
		t.Errorf("told %q", obs.lines)
	}
}

// TestRootExists refuses a root where nothing was installed, naming why.
func TestRootExists(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	s, _ := newSession(t, session.Options{Root: root}, "")
	if err := s.RootExists(); !errors.Is(err, install.ErrNoRoot) || !strings.Contains(err.Error(), root) {
		t.Errorf("RootExists of none: %v", err)
	}
	if r, err := session.ReadOnlyRoot(s); r != nil || err != nil {
		t.Errorf("ReadOnlyRoot of none: %v, %v", r, err)
	}
	if err := session.PeekRoot(s, func(*db.DB) error { return errors.New("called") }); err != nil {
		t.Errorf("PeekRoot of none: %v", err)
	}
}

// TestReadOnlyRootDryRun checks that a dry run refuses a root on a read-only filesystem
// as the change does (session.ErrReadOnly), with a root there or none yet, before its plan.
func TestReadOnlyRootDryRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	publish(t, dir, "hello", "1")
	mnt := testfs.Tmpfs(t, 16<<20)
	repos := []config.Repo{{Name: "r", URLs: []string{dir}}}
	s, _ := newSession(t, session.Options{Root: filepath.Join(mnt, "root"), Repos: repos}, "")
	p, err := s.Plan(t.Context(), session.Request{Op: session.Install, Requires: []repo.Requirement{{Name: "hello"}}})
	if err == nil {
		_, err = p.Apply(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	testfs.Run(t, "", "mount", "-o", "remount,ro", mnt)
	for _, root := range []string{s.Root, filepath.Join(mnt, "new")} {
		for _, r := range []session.Request{
			{Op: session.Install, Requires: []repo.Requirement{{Name: "nosuch"}}},
			{Op: session.Upgrade}, {Op: session.Remove, Names: []string{"hello"}}, {Op: session.Autoremove},
		} {
			s, _ := newSession(t, session.Options{Root: root, Repos: repos, DryRun: true}, "")
			if _, err := s.Plan(t.Context(), r); !errors.Is(err, session.ErrReadOnly) {
				t.Errorf("dry run of %v in %s: %v, want session.ErrReadOnly", r.Op, root, err)
			}
		}
	}
}

// TestErrorKinds checks the classifications commands give advice by.
func TestErrorKinds(t *testing.T) {
	denied := &fs.PathError{Op: "open", Path: "/home/u/.cache/pkg/tmp", Err: fs.ErrPermission}
	for _, tt := range []struct {
		name string
		got  bool
		want bool
	}{
		{"denied in a dir", session.PathDenied(denied, "/srv", "/home/u/.cache/pkg"), true},
		{"denied on a parent", session.PathDenied(&fs.PathError{Path: "/home/u", Err: fs.ErrPermission}, "/home/u/.cache/pkg"), true},
		{"denied elsewhere", session.PathDenied(denied, "/srv"), false},
		{"rename denied", session.PathDenied(fmt.Errorf("fetch: %w", &os.LinkError{Op: "rename", Old: "/home/u/.cache/pkg/tmp/index-1", New: "/home/u/.cache/pkg/tars/a.idx", Err: fs.ErrPermission}), "/srv", "/home/u/.cache/pkg"), true},
		{"rename denied elsewhere", session.PathDenied(&os.LinkError{Op: "rename", Old: "/a/x", New: "/a/y", Err: fs.ErrPermission}, "/srv"), false},
		{"not denied", session.PathDenied(&fs.PathError{Path: "/srv", Err: fs.ErrNotExist}, "/srv"), false},
		{"proxy", session.ProxyFailed(fmt.Errorf("get: %w", &net.OpError{Op: "proxyconnect", Err: errors.New("refused")})), true},
		{"dial", session.ProxyFailed(&net.OpError{Op: "dial", Err: errors.New("refused")}), false},
		{"cache pin", session.PinRefused(fmt.Errorf("read: %w", &trust.PinnedError{Repo: "file:///r"})), true},
		{"root pin, unsigned", session.PinRefused(&trust.PinnedError{Root: "/r", Err: trust.ErrUnsigned}), true},
		{"root pin, expired", session.PinRefused(&trust.PinnedError{Root: "/r", Err: trust.ErrExpired}), false},
		{"unsigned, no pin", session.PinRefused(trust.ErrUnsigned), false},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if got := session.PathOf(fmt.Errorf("write: %w", denied)); got != denied.Path {
		t.Errorf("PathOf = %q", got)
	}
	if got := session.PathOf(&fs.PathError{Path: "bin/x", Err: fs.ErrExist}); got != "" {
		t.Errorf("PathOf a member's path = %q, want none", got)
	}
}
