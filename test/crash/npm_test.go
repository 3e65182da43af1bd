package crash

import (
	"archive/tar"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"pkg/db"
	"pkg/internal/testfs"
	"pkg/repo"
)

// npmSpec builds an npm package of files files under package/ (its package.json, its
// index.js, lib/ files of the sizes appSpec draws), depending on deps (NAME@npm:RANGE),
// with the command NAME-cli.js where cmd is set.
func npmSpec(name, v string, files int, cmd bool, deps ...string) *spec {
	s := &spec{name: name, version: v, kind: repo.KindNPM}
	for _, d := range deps {
		q, err := repo.ParseRequirement(d)
		if err != nil {
			panic(err)
		}
		s.depends = append(s.depends, q)
	}
	add := func(n string, typ byte, mode fs.FileMode, data []byte) {
		s.members = append(s.members, member{name: n, typ: typ, mode: mode, data: data})
	}
	add("package", tar.TypeDir, 0o755, nil)
	add("package/package.json", tar.TypeReg, 0o644, fmt.Appendf(nil, `{"name":%q,"version":%q}`, name, v))
	add("package/index.js", tar.TypeReg, 0o644, fmt.Appendf(nil, "module.exports = %q;\n", name+"@"+v))
	if cmd {
		s.bin = []string{"package/" + name + "-cli.js"} // its own command's name: mid's and top's differ
		add(s.bin[0], tar.TypeReg, 0o755, []byte("#!/usr/bin/env node\nconsole.log(require('./index.js'));\n"))
	}
	if files > 0 {
		add("package/lib", tar.TypeDir, 0o755, nil)
	}
	sizes := rand.New(rand.NewPCG(3, 4))
	for i := range files {
		n := 1 + sizes.IntN(4000)
		if i%20 == 19 {
			n = 4096 + sizes.IntN(64<<10)
		}
		gen := 1
		if v != "1.0.0" && i%10 == 3 {
			gen = 2
		}
		add(fmt.Sprintf("package/lib/f%04d.js", i), tar.TypeReg, 0o644, content(i, gen, n))
	}
	return s
}

// npmInto is where an npm instance's package/ is in the prefix (install's layout).
func npmInto(name, version string) string {
	return "lib/node_modules/.pnpm/" + repo.FileName(name) + "@" + version + "/node_modules/" + name
}

// npmLinks returns the links the node_modules layout must hold for the npm records ps
// (plain names) and the keys requested: each dependency's link beside its dependent, to
// the highest version installed that it allows, lib/node_modules/NAME of the highest
// instance of NAME requested, and lib/node_modules/.pnpm/node_modules/NAME of the highest
// instance of NAME.
func npmLinks(ps []db.Record, requested map[string]repo.Requirement) map[string]string {
	highest := func(ok func(p db.Record) bool) string {
		v := ""
		for _, p := range ps {
			if ok(p) && (v == "" || repo.CompareNPMVersions(p.Version, v) > 0) {
				v = p.Version
			}
		}
		return v
	}
	want := map[string]string{}
	for _, p := range ps {
		if p.Kind != repo.KindNPM {
			continue
		}
		for _, q := range p.Depends {
			if v := highest(func(d db.Record) bool { return d.Name == q.Name && q.Allows(d.Version) }); v != "" {
				want[filepath.Dir(npmInto(p.Name, p.Version))+"/"+q.Name] = "../../" + q.Name + "@" + v + "/node_modules/" + q.Name
			}
		}
		top := highest(func(d db.Record) bool { _, ok := requested[d.Key()]; return d.Name == p.Name && ok })
		if top != "" {
			want["lib/node_modules/"+p.Name] = ".pnpm/" + p.Name + "@" + top + "/node_modules/" + p.Name
		}
		v := highest(func(d db.Record) bool { return d.Name == p.Name })
		want["lib/node_modules/.pnpm/node_modules/"+p.Name] = "../" + p.Name + "@" + v + "/node_modules/" + p.Name
	}
	return want
}

// TestKillNPM is TestKill with an npm tree: top depends on mid, dep and big (any version),
// mid on dep and big; big 1.0.0 and 2.0.0, 1,500 files each, are added and removed as
// instances beside each other, which moves top's and mid's links to big between them.
// A sync moves between two lockfiles, one asking for mid and big 1.0.0 beside top, the
// other for big 2.0.0 beside it, mid its dependency: mid's command and its link in
// lib/node_modules come and go with its request. Killed at random moments, every command
// leaves the tree before or after, its links and what is asked for included (checkRoot,
// checkAsked, verify). It runs on XFS and on btrfs, where a first change commits once.
func TestKillNPM(t *testing.T) {
	n := killIterations(t, 20)
	for _, fs := range []string{"xfs", "btrfs"} {
		t.Run(fs, func(t *testing.T) { killNPMOn(t, fs, n) })
	}
}

// killNPMOn is TestKillNPM on a filesystem of type fs, n commands killed.
func killNPMOn(t *testing.T, fs string, n int) {
	mnt := testfs.Mount(t, fs)
	repoDir := t.TempDir()
	w := publish(t, repoDir, npmSpec("dep", "1.0.0", 0, false), npmSpec("big", "1.0.0", 1500, false), npmSpec("big", "2.0.0", 1500, false),
		npmSpec("mid", "1.0.0", 0, true, "dep@npm:^1.0.0", "big@npm:>=1.0.0"),
		npmSpec("top", "1.0.0", 0, true, "mid@npm:^1", "dep@npm:1.x", "big@npm:*"))
	e := &env{t: t, bin: testfs.PkgBinary(t), root: filepath.Join(mnt, "root"), cache: filepath.Join(mnt, "cache"), repo: repoDir}
	k, s := newKiller(e, w)
	e.initRoot()
	e.ok("fetch", "top")
	e.ok("fetch", "big@1.0.0")
	tree := func(bigs ...string) state {
		st := state{"top@1.0.0": "1.0.0", "mid@1.0.0": "1.0.0", "dep@1.0.0": "1.0.0"}
		for _, v := range bigs {
			st["big@"+v] = v
		}
		return st
	}
	ops := map[string]op{
		"install": {"install", []string{"install", "top"}, tree("2.0.0"), []string{"top@1.0.0"}, nil},
		"add1":    {"add1", []string{"install", "big@1.0.0"}, tree("1.0.0", "2.0.0"), []string{"big@1.0.0"}, nil},
		"drop2":   {"drop2", []string{"remove", "big@2.0.0"}, tree("1.0.0"), nil, []string{"big@2.0.0"}},
		"add2":    {"add2", []string{"install", "big@2.0.0"}, tree("1.0.0", "2.0.0"), []string{"big@2.0.0"}, nil},
		"drop1":   {"drop1", []string{"remove", "big@1.0.0"}, tree("2.0.0"), nil, []string{"big@1.0.0"}},
		"first":   {kind: "first", args: []string{"install", "top"}, after: tree("2.0.0"), ask: []string{"top@1.0.0"}},
		"sync1":   k.lock(tree("1.0.0"), "top", "mid", "big@1.0.0"),
		"sync2":   k.lock(tree("2.0.0"), "top", "big@2.0.0"),
	}
	removeAll := func() op {
		args := []string{"remove"}
		for key := range k.cur {
			args = append(args, key)
		}
		return op{"remove", args, state{}, nil, slices.Collect(maps.Keys(k.cur))}
	}
	next := func() op {
		one, two := k.cur["big@1.0.0"] != "", k.cur["big@2.0.0"] != ""
		switch {
		case k.rng.IntN(6) == 0: // into a root the command makes
			return ops["first"]
		case k.rng.IntN(4) == 0 && one && !two:
			return ops["sync2"]
		case k.rng.IntN(4) == 0:
			return ops["sync1"]
		case !one && !two:
			return ops["install"]
		case k.rng.IntN(4) == 0:
			return removeAll()
		case one && two && k.rng.IntN(2) == 0:
			return ops["drop2"]
		case one && two:
			return ops["drop1"]
		case one:
			return ops["add2"]
		}
		return ops["add1"]
	}
	for _, kind := range []string{"install", "add1", "drop2", "add2", "drop1", "sync1", "sync2", "sync1", "first"} {
		k.step(ops[kind], noKill)
	}
	k.step(removeAll(), noKill)
	t.Logf("seed %d; uninterrupted: %v", s, k.dur)
	for range n {
		k.kill(next())
	}
	t.Logf("%d iterations, %d killed (%d first changes); kills by phase: %v (syncs: %v); violations: %d", n, k.killed, k.firsts, k.phases, k.syncPhases, k.violations)
	if k.violations > 0 {
		t.Errorf("%d violations", k.violations)
	}
	k.covered(t, n)
}
