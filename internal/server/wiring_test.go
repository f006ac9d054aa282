package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestNoLateWiring reads the server's own files and fails on an
// assignment to a field of one of the Server's services (s.x.Field =), or
// of a service built in the function (svc := &T{...} or x.NewT(...), then
// svc.Field =), and on calls of setters (x.SetY(...)). The Server's own
// fields, set while New and buildAPI assemble it, and plain values
// (answers, filters) are not services. Everything a service needs is
// given to its constructor or composite literal: late wiring (a field set
// after the service exists) is how the kinds once broke the cycle kinds ->
// topics/learning -> kinds, and it must not come back.
func TestNoLateWiring(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			servers, built := localNames(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if key, late := lateField(lhs, servers, built); late {
							found = append(found, fset.Position(n.Pos()).String()+": "+key+" =")
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if ok && isSetter(sel.Sel.Name) {
						key := exprString(sel) + "()"
						found = append(found, fset.Position(n.Pos()).String()+": "+key)
					}
				}
				return true
			})
		}
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("late wiring: %s; give it to the service's constructor instead", f)
	}
}

// localNames are the names a function calls the Server by (its receiver
// of type *Server, and variables it makes with &Server{...}), and those
// of the services it builds (&T{...} or a New... call).
func localNames(fn *ast.FuncDecl) (names, built map[string]bool) {
	names, built = map[string]bool{}, map[string]bool{}
	if fn.Recv != nil {
		for _, field := range fn.Recv.List {
			if star, ok := field.Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "Server" {
					for _, n := range field.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, rhs := range as.Rhs {
			lid, ok := as.Lhs[i].(*ast.Ident)
			if !ok {
				continue
			}
			if call, ok := rhs.(*ast.CallExpr); ok && strings.HasPrefix(lastName(call.Fun), "New") {
				built[lid.Name] = true
			}
			u, ok := rhs.(*ast.UnaryExpr)
			if !ok || u.Op != token.AND {
				continue
			}
			if cl, ok := u.X.(*ast.CompositeLit); ok {
				if id, ok := cl.Type.(*ast.Ident); ok && id.Name == "Server" {
					names[lid.Name] = true
				} else {
					built[lid.Name] = true
				}
			}
		}
		return true
	})
	return names, built
}

// lastName is the name a call's function ends in (pkg.NewT: NewT).
func lastName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// lateField tells whether lhs writes a field of a built service: s.x.F
// (x one of the Server's services) or svc.F (svc built in the function).
func lateField(lhs ast.Expr, servers, built map[string]bool) (string, bool) {
	sel, ok := lhs.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	switch x := sel.X.(type) {
	case *ast.Ident:
		return exprString(sel), built[x.Name]
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return exprString(sel), ok && servers[id.Name]
	}
	return "", false
}

func isSetter(name string) bool {
	return len(name) > 3 && strings.HasPrefix(name, "Set") && name[3] >= 'A' && name[3] <= 'Z'
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprString(e.Fun) + "()"
	case *ast.IndexExpr:
		return exprString(e.X) + "[]"
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.ParenExpr:
		return exprString(e.X)
	}
	return "?"
}
