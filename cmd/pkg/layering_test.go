package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCmdWritesNoDatabase: the commands change a root's database only through the
// libraries (txn, install): no file of cmd/pkg calls a method of db.DB that writes.
func TestCmdWritesNoDatabase(t *testing.T) {
	writes := map[string]bool{"PutRepo": true, "DeleteRepo": true, "SetIntents": true, "ClearIntents": true, "Commit": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && writes[sel.Sel.Name] {
					t.Errorf("%s: calls %s, which writes the database", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestLibrariesPrintNothing: the transaction and session libraries import neither the CLI
// framework nor the progress bars; they report through their Observers and results.
func TestLibrariesPrintNothing(t *testing.T) {
	txn, err := filepath.Glob("../../txn/*.go")
	session, err2 := filepath.Glob("../../session/*.go")
	files := append(txn, session...)
	if err != nil || err2 != nil || len(txn) == 0 || len(session) == 0 {
		t.Fatalf("txn and session sources: %v, %v, %v", files, err, err2)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.Contains(p, "urfave/cli") || strings.Contains(p, "progressbar") {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}

// TestLayers checks the module's import graph, as go list reads it from the non-test
// sources, against docs/design.md's layers and its list of who imports whom: every package
// is in one layer and in the list; it imports no package of a higher layer, nothing outside
// internal/ if it is under internal/, and exactly the module's packages the list names.
func TestLayers(t *testing.T) {
	b, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	layers, allowed := layerDoc(t, string(b))
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "pkg/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		from, _ := strings.CutPrefix(fields[0], "pkg/")
		var imports []string
		for _, imp := range fields[1:] {
			if to, ok := strings.CutPrefix(imp, "pkg/"); ok {
				imports = append(imports, to)
			}
		}
		checkImports(t, layers, allowed, from, imports)
		delete(allowed, from)
	}
	for from := range allowed {
		t.Errorf("docs/design.md lists who %s imports, which is no package of the module", from)
	}
}

// checkImports checks the module's packages that from imports against the layers and
// against the imports allowed lists for it.
func checkImports(t *testing.T, layers []layer, allowed map[string][]string, from string, imports []string) {
	t.Helper()
	level := layerOf(layers, from)
	if level < 0 {
		t.Errorf("docs/design.md's layers place no pattern over %s", from)
	}
	want, ok := allowed[from]
	if !ok {
		t.Errorf("docs/design.md does not list who %s imports", from)
	}
	for _, to := range imports {
		switch {
		case level >= 0 && layerOf(layers, to) >= 0 && layerOf(layers, to) < level:
			t.Errorf("%s (layer %s) imports %s of a higher layer", from, layers[level].name, to)
		case strings.HasPrefix(from, "internal/") && !strings.HasPrefix(to, "internal/"):
			t.Errorf("%s, under internal/, imports %s, which is not", from, to)
		case ok && !slices.Contains(want, to):
			t.Errorf("%s imports %s, which docs/design.md's who imports whom does not name", from, to)
		}
	}
	for _, to := range want {
		if !slices.Contains(imports, to) {
			t.Errorf("docs/design.md says %s imports %s, which it does not", from, to)
		}
	}
}

// A layer of docs/design.md: its name and the packages in it, each a path or a prefix
// ending in "/*".
type layer struct {
	name     string
	patterns []string
}

// layerOf returns the index in layers, highest layer first, of the first layer one of
// whose patterns matches pkg, or -1.
func layerOf(layers []layer, pkg string) int {
	for i, l := range layers {
		for _, p := range l.patterns {
			if prefix, ok := strings.CutSuffix(p, "*"); (ok && strings.HasPrefix(pkg, prefix)) || p == pkg {
				return i
			}
		}
	}
	return -1
}

// layerDoc reads the "### Layers" section of doc: its numbered list of layers ("1. name:
// `pattern`, ...") and its list of who imports whom ("- `pkg`: `pkg`, ..." or "nothing").
func layerDoc(t *testing.T, doc string) ([]layer, map[string][]string) {
	t.Helper()
	_, section, _ := strings.Cut(doc, "\n### Layers\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var layers []layer
	allowed := make(map[string][]string)
	for line := range strings.Lines(section) {
		head, list, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		names := backquoted(list)
		if pkg, ok := strings.CutPrefix(head, "- "); ok {
			allowed[strings.Trim(pkg, "`")] = names
		} else if _, name, ok := strings.Cut(head, ". "); ok && len(names) > 0 {
			layers = append(layers, layer{name: name, patterns: names})
		}
	}
	if len(layers) == 0 || len(allowed) == 0 {
		t.Fatal("docs/design.md has no \"### Layers\" section with its layers and who imports whom")
	}
	return layers, allowed
}

// backquoted returns the backquoted words of s, in order.
func backquoted(s string) []string {
	var words []string
	for {
		_, rest, ok := strings.Cut(s, "`")
		if !ok {
			return words
		}
		word, after, ok := strings.Cut(rest, "`")
		if !ok {
			return words
		}
		words = append(words, word)
		s = after
	}
}
