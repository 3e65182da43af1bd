package main

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestDocsPackageTable checks that the package table of docs/design.md lists exactly the
// module's packages that the pkg binary is built from.
func TestDocsPackageTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := packageTable(string(b))
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var built []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, "pkg/"); ok {
			built = append(built, rel)
		}
	}
	slices.Sort(documented)
	slices.Sort(built)
	if !slices.Equal(documented, built) {
		t.Errorf("docs/design.md's package table lists %q; go list -deps ./cmd/pkg has %q: update the table", documented, built)
	}
}

// packageTable returns the first column of the table under the "## Packages" heading of
// doc, without its backquotes.
func packageTable(doc string) []string {
	_, rest, _ := strings.Cut(doc, "\n## Packages\n")
	var pkgs []string
	inTable := false
	for line := range strings.Lines(rest) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if name, ok := strings.CutPrefix(cell, "`"); ok {
			pkgs = append(pkgs, strings.TrimSuffix(name, "`"))
		}
	}
	return pkgs
}

// TestDocsCommands checks that docs/commands.md has a section "### pkg VERB" for every
// command and subcommand, naming each of its flags, and names every global flag.
func TestDocsCommands(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	sections := make(map[string]string) // "cache prune" → its text
	for _, s := range strings.Split(doc, "\n### pkg ")[1:] {
		name, body, _ := strings.Cut(s, "\n")
		body, _, _ = strings.Cut(body, "\n## ")
		sections[strings.TrimSpace(name)] = body
	}
	app := newApp(io.Discard, io.Discard)
	for _, f := range app.Flags {
		if name := f.Names()[0]; !strings.Contains(doc, "`--"+name) {
			t.Errorf("docs/commands.md does not name the global flag --%s", name)
		}
	}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(prefix + " " + c.Name)
			body, ok := sections[name]
			if !ok && len(c.Subcommands) == 0 {
				t.Errorf("docs/commands.md has no section \"### pkg %s\"", name)
			}
			for _, f := range c.Flags {
				if flag := f.Names()[0]; !strings.Contains(body, "--"+flag) {
					t.Errorf("docs/commands.md: section pkg %s does not name its flag --%s", name, flag)
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", app.Commands)
}
