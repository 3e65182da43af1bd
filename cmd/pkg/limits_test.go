package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pkg/internal/testfs"
)

// hugeSize is the largest int64, a size no archive has.
const hugeSize = "9223372036854775807"

// TestHugeSize installs from an index, and syncs from a lockfile, whose hello declares a
// size of 2^63-1: both are refused, naming the package and the field (before the lockfile's
// "locked" digest, which the edit breaks), and change neither the root, nor the cache, nor
// the database.
func TestHugeSize(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(demoRepo)); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.json")
	good, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	e := newEnv(t, base, dir)
	e.initRoot()
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "hello")
	e.ok("fetch", "libgreet")

	size := regexp.MustCompile(`("name": "hello",[^}]*"size": )\d+`)
	if err := os.WriteFile(index, size.ReplaceAll(good, []byte("${1}"+hugeSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`("name":"hello",[^}]*"size":)\d+`).ReplaceAll(data, []byte("${1}"+hugeSize))
	if bytes.Equal(edited, data) {
		t.Fatalf("no size of hello in\n%s", data)
	}
	if err := os.WriteFile(lock, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	root, cache := rootTree(t, e.root), testfs.Tree(t, e.cache)

	want := "package hello@1.2.0: size " + hugeSize + " is over the limit of 512 GiB"
	for _, args := range [][]string{{"install", "hello"}, {"sync", "-f", lock}} {
		if _, stderr, code := e.pkg(args...); code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", args, code, stderr, want)
		}
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), root)
	testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
	checkDBEmpty(t, e.root)
}

// TestSyncMirrorEscape syncs, with --repo naming a directory deep in a mirror (a path, then
// over HTTP), a lockfile whose URL climbs out of the recorded repository with encoded dots:
// the archive it would reach, beside the mirror's directory, is not read, the URL is
// named, and the root, the cache and the database are as they were.
func TestSyncMirrorEscape(t *testing.T) {
	base := t.TempDir()
	dir := syncRepo(t)
	e := newEnv(t, base, dir)
	e.initRoot()
	lock := filepath.Join(base, "pkg.lock")
	e.ok("lock", "-o", lock, "tool")
	e.ok("fetch", "lib")
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	good := "file://" + dir + "/tool-1.10.tar"
	bad := "file://" + dir + "/%2e%2e/outside/tool-1.10.tar"
	if !bytes.Contains(data, []byte(good)) {
		t.Fatalf("no %s in\n%s", good, data)
	}
	if err := os.WriteFile(lock, bytes.Replace(data, []byte(good), []byte(bad), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	mirror := filepath.Join(base, "mirror")
	if err := os.MkdirAll(filepath.Join(mirror, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(mirror, "outside"), os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	root, cache := rootTree(t, e.root), testfs.Tree(t, e.cache)
	for _, loc := range []string{filepath.Join(mirror, "deep"), serve(t, mirror) + "/deep/"} {
		e.repo = loc
		_, stderr, code := e.pkg("sync", "-f", lock)
		if want := "pkg: fetch: archive URL " + bad + `: path under file://` + dir + `/: segment ".."`; code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("sync from %s: exit %d, stderr %q; want exit 1 and %q", loc, code, stderr, want)
		}
		testfs.SameTree(t, "root", rootTree(t, e.root), root)
		testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
		checkDBEmpty(t, e.root)
	}
}
