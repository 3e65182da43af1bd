package buildinfo

import (
	"bytes"
	stdbuildinfo "debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, tt := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}, "0123456789ab (go1.25)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}, "0123456789ab+changes (go1.25)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}, "0123456789ab (go1.25)"},
		{[]debug.BuildSetting{{Key: "-tags", Value: "a,b"}}, "(devel) (go1.25)"},
		{nil, "(devel) (go1.25)"},
	} {
		info := &debug.BuildInfo{GoVersion: "go1.25", Path: "pkg/cmd/pkg", Main: debug.Module{Path: "pkg", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.1.0", Sum: "h1:x"}}, Settings: tt.settings}
		if got := FromText(info.GoVersion, info.String()); got != tt.want {
			t.Errorf("FromText(%v) = %q, want %q", tt.settings, got, tt.want)
		}
	}
}

// TestReadSelf reads the test binary's own record and holds it to runtime/debug's reading.
func TestReadSelf(t *testing.T) {
	goVersion, modinfo, err := read("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if goVersion != runtime.Version() {
		t.Errorf("Go version %q, want %q", goVersion, runtime.Version())
	}
	want, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("runtime/debug finds no build info in the test binary")
	}
	// String writes the Go version's line, then the module text as recorded.
	if got := "go\t" + goVersion + "\n" + modinfo; got != want.String() {
		t.Errorf("read:\n%s\nruntime/debug:\n%s", got, want)
	}
	if v, ok := Version(); !ok || v != FromText(want.GoVersion, want.String()) {
		t.Errorf("Version() = %q, %v", v, ok)
	}
}

func TestReadRefuses(t *testing.T) {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	off, size, err := section(bytes.NewReader(self), sectionName)
	if err != nil {
		t.Fatal(err)
	}
	rec := self[off : off+size]
	noMagic := bytes.Clone(rec)
	noMagic[1] = 'g'
	notInline := bytes.Clone(rec)
	notInline[len(magic)+1] &^= flagInline
	long := bytes.Clone(rec)
	long[headerSize], long[headerSize+1] = 0xff, 0x7f // a Go version of 16 KiB, longer than the record
	for name, b := range map[string][]byte{
		"empty":      nil,
		"header":     rec[:headerSize],
		"no magic":   noMagic,
		"not inline": notInline,
		"too long":   long,
		"cut":        rec[:headerSize+8],
	} {
		if _, _, err := parseRecord(b); !errors.Is(err, errFormat) {
			t.Errorf("%s: err %v, want errFormat", name, err)
		}
	}
	for name, b := range map[string][]byte{
		"not ELF":      []byte("#!/bin/sh\necho hello\n" + string(make([]byte, 64))),
		"cut":          self[:64],
		"other name":   bytes.ReplaceAll(self, []byte(sectionName+"\x00"), []byte(".go.buildinfX\x00")),
		"no data":      self[:len(self)/2],
		"no class":     append([]byte("\x7fELF\x00"), self[5:]...),
		"big-endian":   append([]byte("\x7fELF\x02\x02"), self[6:]...),
		"empty":        nil,
		"ELF, nothing": []byte("\x7fELF"),
	} {
		if _, _, err := section(bytes.NewReader(b), sectionName); !errors.Is(err, errFormat) {
			t.Errorf("%s: err %v, want errFormat", name, err)
		}
	}
	if _, _, err := read(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: err %v", err)
	}
}

// TestRead32 reads the record of a program built for 386, a 32-bit ELF file as arm's are,
// and holds it to debug/buildinfo's reading.
func TestRead32(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-o", "hello")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOOS=linux", "GOARCH=386", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build for 386: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "hello")
	goVersion, modinfo, err := read(bin)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stdbuildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got := "go\t" + goVersion + "\n" + modinfo; got != want.String() {
		t.Errorf("read:\n%s\ndebug/buildinfo:\n%s", got, want)
	}
}

// FuzzRecord holds the parsers to their bounds: no panic, and a record's strings within it.
func FuzzRecord(f *testing.F) {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		f.Fatal(err)
	}
	if off, size, err := section(bytes.NewReader(self), sectionName); err == nil {
		f.Add(self[off : off+size])
	}
	f.Add(self[:4096])
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, mod, err := parseRecord(b); err == nil && len(v)+len(mod) > len(b) {
			t.Errorf("strings of %d bytes from a record of %d", len(v)+len(mod), len(b))
		}
		section(bytes.NewReader(b), sectionName)
	})
}
