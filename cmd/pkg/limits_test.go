package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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

	if err := os.WriteFile(index, hugeHello(t, good), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, hugeHello(t, data), 0o644); err != nil {
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

// hugeHello returns the JSON document data with the size of every object named hello set to
// hugeSize, failing the test if there is none.
func hugeHello(t *testing.T, data []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["size"]; ok && v["name"] == "hello" {
				v["size"] = json.Number(hugeSize)
				found = true
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	if !found {
		t.Fatalf("no size of hello in\n%s", data)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSyncMirrorEscape syncs, with --repo naming a directory deep in a mirror (a path, then
// over HTTP), a lockfile whose URL climbs out of the recorded repository with encoded dots:
// the lockfile is refused as it is read, so the archive it would reach, beside the
// mirror's directory, is not read, the URL is named, and the root, the cache and the
// database are as they were.
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
		if want := "archive " + bad + " is not beneath its repository file://" + dir + "/"; code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("sync from %s: exit %d, stderr %q; want exit 1 and %q", loc, code, stderr, want)
		}
		testfs.SameTree(t, "root", rootTree(t, e.root), root)
		testfs.SameTree(t, "cache", testfs.Tree(t, e.cache), cache)
		checkDBEmpty(t, e.root)
	}
}

// TestLongCommandName adds, and installs from an index edited to hold, a package whose
// command's name is 252 bytes: a file name, but bin/.NAME.new is not one. repo add refuses
// it and the index refuses it when read, each naming the package and the command, and
// neither changes the repository, the root or the cache.
func TestLongCommandName(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "repo")
	addPackage(t, dir, "tool", "1.0")
	e := newEnv(t, base, dir)
	e.initRoot()
	long := strings.Repeat("c", 252)
	want := "package tool@2.0: command \"cccccccccccccccccccccccccccccccccccccccc\"... is 252 bytes, over the limit of 250 bytes"
	archive := filepath.Join(base, "tool-2.0.tar")
	if err := os.WriteFile(archive, packageTar(t, "tool", "2.0", 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	repoTree := testfs.Tree(t, dir)
	_, stderr, code := e.pkg("repo", "add", dir, archive, "--name", "tool", "--version", "2.0", "--bin", long+"=bin/tool")
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("repo add: exit %d, %q; want 1 and %q", code, stderr, want)
	}
	testfs.SameTree(t, "repository", testfs.Tree(t, dir), repoTree)

	index := filepath.Join(dir, "index.json")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"1.0"`), []byte(`"2.0"`), 1)
	data = bytes.Replace(data, []byte(`"bin/tool"`), []byte(`"`+long+`=bin/tool"`), 1)
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	root := rootTree(t, e.root)
	if _, stderr, code := e.pkg("install", "tool"); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("install: exit %d, %q; want 1 and %q", code, stderr, want)
	}
	testfs.SameTree(t, "root", rootTree(t, e.root), root)
	checkDBEmpty(t, e.root)
}
