package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/repo"
)

// TestDamagedCache damages hello's cached tar one way per case and installs it again: pkg
// notices before installing, removes the entry and fetches it again; offline it fails,
// saying so, with a hint to fetch the package online (the index is cached: the archive is
// what is missing), and changes nothing in the root.
func TestDamagedCache(t *testing.T) {
	flipAt := func(marker string) func(t *testing.T, b []byte) []byte {
		return func(t *testing.T, b []byte) []byte {
			i := bytes.Index(b, []byte(marker))
			if i < 0 {
				t.Fatalf("%q not in the cached tar", marker)
			}
			b[i+len(marker)-1] ^= 0x20
			return b
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, b []byte) []byte
		why    string
	}{
		{"truncated", func(_ *testing.T, b []byte) []byte { return b[:len(b)-512] }, "index damaged"},
		{"grown", func(_ *testing.T, b []byte) []byte { return append(b, make([]byte, 512)...) }, "index damaged"},
		{"data-flipped", flipAt("Prints the greeting"), `member "bin/hello": archive does not match its index: data differs`},
		{"header-flipped", flipAt("bin/hello\x00"), `member "bin/hello": archive does not match its index: header block differs`},
		{"end-flipped", func(_ *testing.T, b []byte) []byte { b[len(b)-1] = 1; return b }, "no end-of-archive blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, t.TempDir(), serve(t, demoRepo))
			e.ok("install", "hello")
			e.ok("remove", "hello")
			tarPath := filepath.Join(e.cache, "tars", indexSHA(t, "hello")+".tar")
			good, err := os.ReadFile(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			damage := func() {
				if err := os.WriteFile(tarPath, tt.damage(t, bytes.Clone(good)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			damage()
			before := rootTree(t, e.root)
			_, stderr, code := e.pkg("--offline", "install", "hello")
			if code != 1 || !strings.Contains(stderr, "pkg: cached hello 1.2.0 is damaged (") ||
				!strings.Contains(stderr, tt.why) || !strings.Contains(stderr, "offline") || strings.Contains(stderr, "fetch:") || strings.Contains(stderr, "tarutil:") {
				t.Errorf("offline install of damaged hello: exit %d, stderr %q; want 1, damaged, %q, offline, and no package's name of pkg's code", code, stderr, tt.why)
			}
			if !strings.Contains(stderr, "pkg: hint: fetch the package again while online ('"+e.cmd("fetch NAME...")+"'") || strings.Contains(stderr, "index in the cache") {
				t.Errorf("offline install of damaged hello: stderr %q; want a hint to fetch the package online", stderr)
			}
			if _, err := os.Stat(tarPath); !os.IsNotExist(err) {
				t.Errorf("damaged entry still in the cache: %v", err)
			}
			testfs.SameTree(t, "root after refused offline install", rootTree(t, e.root), before)

			e.ok("fetch", "hello")
			damage()
			out, stderr := e.ok("install", "hello")
			if !strings.Contains(stderr, "pkg: note: cached hello 1.2.0 is damaged (") || !strings.Contains(stderr, "fetching it again") ||
				strings.Contains(stderr, "fetch:") || strings.Contains(stderr, "tarutil:") || !strings.Contains(out, "installed hello 1.2.0") {
				t.Errorf("install of damaged hello:\n%s%s", out, stderr)
			}
			if got, err := os.ReadFile(tarPath); err != nil || !bytes.Equal(got, good) {
				t.Errorf("cached tar after fetching again: %d bytes, %v; want the %d good ones", len(got), err, len(good))
			}
			e.ok("verify")
		})
	}
}

// TestSyncDamagedCacheDirectory: a cached entry found damaged by a sync of a lockfile of a
// repository directory is fetched again from that repository, as over HTTP, whether the
// command names the repository or takes it from the lockfile.
func TestSyncDamagedCacheDirectory(t *testing.T) {
	for _, tt := range []struct {
		name string
		repo bool
	}{{"lockfile", false}, {"repo", true}} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "repo")
			lib := addPackage(t, dir, "lib", "1.5")
			addPackage(t, dir, "app", "1.0", "lib>=1")
			first := newEnv(t, base, dir)
			lock := filepath.Join(base, "pkg.lock")
			first.ok("lock", "-o", lock, "app")
			first.ok("sync", "-f", lock)
			tarPath := filepath.Join(first.cache, "tars", lib.SHA256+".tar")
			good, err := os.ReadFile(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			bad := bytes.Clone(good)
			bad[bytes.Index(bad, []byte("vvvv"))+100] = 'x'
			if err := os.WriteFile(tarPath, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			second := newEnv(t, filepath.Join(base, "second"), dir)
			second.cache = first.cache
			args := []string{"pkg", "--root", second.root, "--cache", second.cache, "sync", "-f", lock}
			if tt.repo {
				args = append(args[:5], append([]string{"--repo", dir}, args[5:]...)...)
			}
			var out, stderr bytes.Buffer
			if code := run(args, &out, &stderr); code != 0 || !strings.Contains(stderr.String(), "cached lib 1.5 is damaged") {
				t.Fatalf("sync with lib's cache entry damaged: exit %d\n%s%s", code, &out, &stderr)
			}
			second.checkInstalled("sync", "app 1.0, lib 1.5")
			if got, err := os.ReadFile(tarPath); err != nil || !bytes.Equal(got, good) {
				t.Errorf("cached tar after fetching again: %d bytes, %v; want the %d good ones", len(got), err, len(good))
			}
		})
	}
}

// TestReinstallDamagedCache: damage inside a large member of a cached tar, which the check
// at an entry's use samples past, is installed; verify --full finds it, where the file
// still shares the cache's blocks as damage of the cache's entry, not a change in the root;
// the reinstall it names checks the entry whole, refuses offline naming the entry, and
// online fetches it again and so puts back the archive's bytes, on a filesystem that
// copies and on one that shares the cache's blocks.
func TestReinstallDamagedCache(t *testing.T) {
	for _, kind := range []string{"tmp", "xfs"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			if kind != "tmp" {
				base = testfs.Mount(t, kind)
			}
			dir := filepath.Join(base, "repo")
			big := strings.Repeat("0123456789abcdef", 128<<10) // 2 MiB: past the budget of a whole check at use
			archive := filepath.Join(base, "big-1.0.tar")
			if err := os.WriteFile(archive, pax(t, tf("share/big/data", big), tf("share/big/small", "small\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := repo.Add(t.Context(), dir, archive, repo.Package{Name: "big", Version: "1.0"}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, base, dir)
			e.ok("fetch", "big")
			tarPath := filepath.Join(e.cache, "tars", res.Package.SHA256+".tar")
			good, err := os.ReadFile(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(tarPath, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("DAMAGE"), int64(bytes.Index(good, []byte(big[:64])))+1<<20); err != nil {
				t.Fatal(err)
			}
			f.Close()
			damaged, err := os.ReadFile(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			e.ok("install", "big")
			want, advice := "big 1.0: modified share/big/data (content)\n", ""
			if kind == "xfs" {
				want = "big 1.0: damaged share/big/data (content: cloned from the damaged cache entry " + res.Package.SHA256 + ", not changed in the root)\n"
				advice = "the cache's copy of big is damaged, not a file you changed"
			}
			out, stderr, code := e.pkg("verify", "--full")
			if code != 1 || out != want || !strings.Contains(stderr, advice) || !strings.Contains(stderr, e.cmd("install --reinstall big")) {
				t.Fatalf("verify --full of the damaged install: exit %d\n%s%s\nwant %q and advice %q", code, out, stderr, want, advice)
			}
			if kind == "xfs" {
				if out, _ := e.ok("verify"); out != "verified 1 package, 2 files\n" {
					t.Errorf("verify, reading no shared block: %q", out)
				}
				// The entry's index naming another boot, as after a crash, a use checks it
				// whole and would remove it; verify --full reads its members unchecked
				// (fetch.Cache.Unchecked) and still lays the file to it.
				idx := strings.TrimSuffix(tarPath, ".tar") + ".idx"
				was, err := os.ReadFile(idx)
				if err != nil {
					t.Fatal(err)
				}
				line, rest, _ := bytes.Cut(was, []byte("\n"))
				head := strings.Fields(string(line))[:5] // pkg-entry 2 NAME VERSION SIZE
				if err := os.WriteFile(idx, append([]byte(strings.Join(append(head, "another-boot"), " ")+"\n"), rest...), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, stderr, code := e.pkg("verify", "--full"); code != 1 || out != want {
					t.Errorf("verify --full of an entry a use checks whole: exit %d\n%s%s\nwant %q", code, out, stderr, want)
				}
				if err := os.WriteFile(idx, was, 0o644); err != nil {
					t.Fatal(err)
				}
				// With no repository in effect, the cache alone cannot put the bytes back.
				bare := *e
				bare.repo = ""
				wantLine := bare.cmd("install --reinstall big")
				wantLine = strings.Replace(wantLine, " install --reinstall", " --repo URL install --reinstall", 1)
				if out, stderr, code := bare.pkg("verify", "--full"); code != 1 || out != want || !strings.Contains(stderr, "from a repository that offers it: '"+wantLine+"'") || strings.Contains(stderr, "--offline") {
					t.Errorf("verify --full with no repository in effect: exit %d\n%s%s\nwant the reinstall %q", code, out, stderr, wantLine)
				}
				// Run offline, it names the reinstall online: offline, that reinstall refuses.
				if out, stderr, code := e.pkg("--offline", "verify", "--full"); code != 1 || out != want || !strings.Contains(stderr, "'"+e.cmd("install --reinstall big")+"'") || strings.Contains(stderr, "--offline") {
					t.Errorf("verify --full, offline: exit %d\n%s%s\nwant the reinstall %q, online", code, out, stderr, e.cmd("install --reinstall big"))
				}
			}
			out, stderr, code = e.pkg("--offline", "install", "--reinstall", "big")
			if code != 1 || !strings.Contains(stderr, "cached big 1.0 is damaged") || !strings.Contains(stderr, "share/big/data") {
				t.Errorf("offline reinstall of the damaged entry: exit %d\n%s%s", code, out, stderr)
			}
			e.ok("fetch", "big") // the offline reinstall removed the entry: fetch it, damaged again
			if err := os.WriteFile(tarPath, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			out, stderr = e.ok("install", "--reinstall", "big")
			if !strings.Contains(stderr, "cached big 1.0 is damaged") || !strings.Contains(out, "reinstalled big 1.0") {
				t.Errorf("install --reinstall big:\n%s%s", out, stderr)
			}
			if got, err := os.ReadFile(tarPath); err != nil || !bytes.Equal(got, good) {
				t.Errorf("cached tar after the reinstall: %d bytes, %v; want the %d good ones", len(got), err, len(good))
			}
			e.ok("verify", "--full")
		})
	}
}
