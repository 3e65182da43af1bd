package realworld

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"pkg/internal/testfs"
)

// deb is one Debian package as the host's apt offers it (its candidate version), downloaded.
type deb struct {
	Name, Version string
	Path          string // in the download cache
}

// upstream returns the upstream part of a Debian version: no epoch, no Debian revision
// ("1:1.2.13.dfsg-1" → "1.2.13.dfsg").
func upstream(version string) string {
	if _, v, ok := strings.Cut(version, ":"); ok {
		version = v
	}
	if i := strings.LastIndexByte(version, '-'); i >= 0 {
		version = version[:i]
	}
	return version
}

// debDir returns the directory .debs are kept in between runs: $PKG_TEST_DEBS, else
// /var/tmp/pkg-test-debs (kept across reboots, unlike /tmp).
func debDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("PKG_TEST_DEBS")
	if dir == "" {
		dir = "/var/tmp/pkg-test-debs"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dependsFlags make apt-cache depends list what apt installs: Depends and Pre-Depends.
var dependsFlags = []string{"--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"}

// closure returns, sorted, roots and every package they need as apt-cache depends --recurse
// lists them, taking of each group of alternatives ("a | b") the first real package, or
// when all are virtual the first provider of the first that has one: what a resolver that
// tries alternatives in order takes. (The whole recursion follows every alternative:
// libpython3.11-stdlib's "media-types | mime-support" would bring perl and dpkg.)
func closure(t testing.TB, roots ...string) []string {
	t.Helper()
	testfs.NeedTools(t, "apt-cache", "apt-get")
	cmd := exec.Command("apt-cache", append(append([]string{"depends", "--recurse"}, dependsFlags...), roots...)...)
	out, err := cmd.Output()
	if err != nil {
		testfs.Unavailable(t, fmt.Sprintf("apt-cache depends %s: %v: %s (a Debian 12 host with apt's lists: apt-get update)", strings.Join(roots, " "), err, stderrOf(err)))
	}
	deps, err := parseDepends(string(out))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		for _, group := range deps[name] {
			pick := group.pick()
			if pick == "" {
				t.Fatalf("apt-cache depends: %s needs %v, none of them a package or provided by one", name, group)
			}
			todo = append(todo, pick)
		}
	}
	var names []string
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// alternative is one package of a dependency group; virtual ones list their providers.
type alternative struct {
	name      string
	virtual   bool
	providers []string
}

// group is one dependency: any of its alternatives satisfies it.
type group []alternative

// pick returns the package a resolver trying alternatives in order takes, "" if none.
func (g group) pick() string {
	for _, a := range g {
		if !a.virtual {
			return a.name
		}
	}
	for _, a := range g {
		if len(a.providers) > 0 {
			return a.providers[0]
		}
	}
	return ""
}

// parseDepends reads apt-cache depends' output: each package at the start of a line, its
// dependencies below it ("  Depends: x", " |Depends: x" when the next line is an alternative,
// "<x>" for a virtual package), each virtual package's providers indented below that.
func parseDepends(out string) (map[string][]group, error) {
	deps := map[string][]group{}
	var pkg string
	var cur group
	open := false // cur continues on the next line
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		bad := func() error { return fmt.Errorf("apt-cache depends: line %d: unexpected %q", i+1, line) }
		switch {
		case !strings.HasPrefix(line, " "):
			if open {
				return nil, bad()
			}
			pkg = line
		case strings.HasPrefix(line, "    "):
			if len(cur) == 0 || !cur[len(cur)-1].virtual {
				return nil, bad()
			}
			a := &cur[len(cur)-1]
			a.providers = append(a.providers, archless(strings.TrimSpace(line)))
		default:
			_, name, ok := strings.Cut(line, ": ")
			if pkg == "" || !ok || len(line) < 2 {
				return nil, bad()
			}
			if !open {
				cur = nil
				deps[pkg] = append(deps[pkg], nil)
			}
			virtual := strings.HasPrefix(name, "<") && strings.HasSuffix(name, ">")
			cur = append(cur, alternative{name: archless(strings.Trim(name, "<>")), virtual: virtual})
			deps[pkg][len(deps[pkg])-1] = cur
			open = line[1] == '|'
		}
	}
	if open {
		return nil, fmt.Errorf("apt-cache depends: the last dependency has an alternative missing")
	}
	return deps, nil
}

// archless drops an architecture qualifier (":any", ":amd64").
func archless(name string) string {
	name, _, _ = strings.Cut(name, ":")
	return name
}

// download returns the .deb of each of names, the candidate version of the host's apt, from
// the download cache, fetching with apt-get download those it lacks or holds damaged.
func download(t testing.TB, names []string) []deb {
	t.Helper()
	testfs.NeedTools(t, "apt-get")
	dir := debDir(t)
	unlock := lockDir(t, dir)
	defer unlock()
	cmd := exec.Command("apt-get", append([]string{"download", "--print-uris"}, names...)...)
	out, err := cmd.Output()
	if err != nil {
		testfs.Unavailable(t, fmt.Sprintf("apt-get download --print-uris: %v: %s (a Debian 12 host with apt's lists: apt-get update)", err, stderrOf(err)))
	}
	want, err := parseURIs(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(names) {
		t.Fatalf("apt-get download --print-uris %s: %d archives, want %d:\n%s", strings.Join(names, " "), len(want), len(names), out)
	}
	var missing []string
	for _, u := range want {
		if !hasSum(filepath.Join(dir, u.file), u.sha256) {
			missing = append(missing, u.name)
		}
	}
	if len(missing) > 0 {
		fetchInto(t, dir, missing, want)
	}
	debs := make([]deb, len(want))
	for i, u := range want {
		debs[i] = deb{Name: u.name, Version: u.version, Path: filepath.Join(dir, u.file)}
	}
	return debs
}

// uri is one line of apt-get download --print-uris: 'URL' FILE SIZE SHA256:HEX.
type uri struct {
	name, version, file, sha256 string
}

// parseURIs reads apt-get download --print-uris' lines.
func parseURIs(out string) ([]uri, error) {
	var us []uri
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) != 4 || !strings.HasPrefix(f[3], "SHA256:") {
			return nil, fmt.Errorf("apt-get download --print-uris: unexpected line %q", line)
		}
		if _, err := strconv.ParseInt(f[2], 10, 64); err != nil {
			return nil, fmt.Errorf("apt-get download --print-uris: size in %q: %w", line, err)
		}
		parts := strings.Split(strings.TrimSuffix(f[1], ".deb"), "_")
		if len(parts) != 3 {
			return nil, fmt.Errorf("apt-get download --print-uris: file %q is not NAME_VERSION_ARCH.deb", f[1])
		}
		version, err := url.PathUnescape(parts[1])
		if err != nil {
			return nil, fmt.Errorf("apt-get download --print-uris: version in %q: %w", f[1], err)
		}
		us = append(us, uri{name: parts[0], version: version, file: f[1], sha256: strings.TrimPrefix(f[3], "SHA256:")})
	}
	return us, nil
}

// fetchInto downloads names with apt-get download into a temporary directory of dir, checks
// each against want's sha256, and moves it into dir in place of other versions of it.
func fetchInto(t testing.TB, dir string, names []string, want []uri) {
	t.Helper()
	tmp, err := os.MkdirTemp(dir, ".download-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("apt-get", append([]string{"download", "-q"}, names...)...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		testfs.Unavailable(t, fmt.Sprintf("apt-get download %s: %v (apt's lists may be stale: apt-get update)\n%s", strings.Join(names, " "), err, out))
	}
	for _, u := range want {
		if !slices.Contains(names, u.name) {
			continue
		}
		got := filepath.Join(tmp, u.file)
		if !hasSum(got, u.sha256) {
			t.Fatalf("apt-get download %s: %s is missing or does not match its sha256 %s", u.name, u.file, u.sha256)
		}
		old, _ := filepath.Glob(filepath.Join(dir, u.name+"_*.deb"))
		if err := os.Rename(got, filepath.Join(dir, u.file)); err != nil {
			t.Fatal(err)
		}
		for _, o := range old {
			if filepath.Base(o) != u.file {
				os.Remove(o)
			}
		}
	}
}

// hasSum reports whether the file at path exists and its sha256 is sum (hex).
func hasSum(path, sum string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, bufio.NewReader(f)); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == sum
}

// lockDir holds an exclusive flock on dir's .lock until the returned function is called:
// two test runs sharing the download cache fetch one after the other.
func lockDir(t testing.TB, dir string) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// stderrOf returns the standard error an *exec.ExitError kept, trimmed.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
