package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCmdThroughEngine: the CLI reaches roots, databases, caches and archives only through
// the engine (session) and the packages it returns values of, never by importing the
// parts that hold them.
func TestCmdThroughEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "pkg/cmd/pkg").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	for _, part := range []string{"pkg/db", "pkg/install", "pkg/fetch", "pkg/tarutil"} {
		if slices.Contains(imports, part) {
			t.Errorf("cmd/pkg imports %s: reach it through session", part)
		}
	}
}

// TestSurface holds the exported surface to what docs/design.md promises: txn, the package
// of a change, exports at most 60 names (funcs, types, vars, consts and exported methods);
// no type has more than 25 exported methods; and each of the module's central concepts is
// one type, defined once among the non-test packages.
func TestSurface(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}}{{range .GoFiles}} {{.}}{{end}}`, "pkg/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	concepts := map[string][]string{"Plan": nil, "Index": nil, "Package": nil, "Repo": nil, "Observer": nil, "PinnedError": nil}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, dir := strings.TrimPrefix(f[0], "pkg/"), f[1]
		names, methods := exported(t, dir, f[2:])
		if pkg == "txn" && names > 60 {
			t.Errorf("txn exports %d names, more than 60", names)
		}
		for typ, n := range methods {
			if n > 25 {
				t.Errorf("%s.%s has %d exported methods, more than 25", pkg, typ, n)
			}
			if _, ok := concepts[typ]; ok {
				concepts[typ] = append(concepts[typ], pkg)
			}
		}
	}
	for name, pkgs := range concepts {
		if len(pkgs) != 1 {
			t.Errorf("type %s is defined in %d packages (%v), want 1", name, len(pkgs), pkgs)
		}
	}
}

// exported counts the exported names of the package of files in dir, and the exported
// methods of each of its types (every type declared, with 0 for those with none).
func exported(t *testing.T, dir string, files []string) (names int, methods map[string]int) {
	t.Helper()
	methods = make(map[string]int)
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				names++
				if d.Recv != nil {
					methods[receiver(d.Recv.List[0].Type)]++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						methods[s.Name.Name] += 0
						if s.Name.IsExported() {
							names++
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								names++
							}
						}
					}
				}
			}
		}
	}
	return names, methods
}

// receiver returns the name of the type of a method's receiver, T of T, *T, T[P] or *T[P].
func receiver(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
