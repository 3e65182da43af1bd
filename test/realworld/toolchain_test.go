package realworld

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoToolchain installs golang-1.19-go, published with no flags beside golang-1.19-src
// and their closure: the install takes -src from the control file's Depends, and the go
// command, whose src is a symlink into -src's files, builds and runs a module with no Go of
// the host's on PATH and GOROOT unset (must-show 1 of #32).
func TestGoToolchain(t *testing.T) {
	w := newWorld(t, "golang-1.19-go")
	w.pkg("install", "golang-1.19-go")
	w.checkInstalled(w.published())
	w.verify()
	w.checkShared("golang-1.19-go", "golang-1.19-src")

	goroot := filepath.Join(w.root, "usr/lib/go-1.19")
	goCmd := filepath.Join(goroot, "bin/go")
	mod := t.TempDir()
	for name, data := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.19\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from\", \"the root\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = mod
		cmd.Env = w.env(w.path("go"), "GOCACHE="+t.TempDir(), "GOPATH="+t.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off")
		return strings.TrimSpace(output(t, cmd))
	}
	if got := run(goCmd, "env", "GOROOT"); got != goroot {
		t.Errorf("go env GOROOT = %q, want %q", got, goroot)
	}
	run(goCmd, "build", "-o", "hello", ".")
	if got, want := run(filepath.Join(mod, "hello")), "hello from the root"; got != want {
		t.Errorf("hello printed %q, want %q", got, want)
	}
	if got, want := run(goCmd, "version", "hello"), "hello: go"+upstream(w.debs["golang-1.19-go"].Version); got != want {
		t.Errorf("go version hello = %q, want %q", got, want)
	}
}
