package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, from its func line to its
// closing brace, tests included: a longer one does several jobs and should
// be split by job.
const maxFuncLines = 100

func TestNoLongFunctions(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %s is %d lines (at most %d): split it by job", rel, start.Line, fd.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d Go files under %s", files, root)
	}
}
