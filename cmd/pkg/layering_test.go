package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
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
