package layering

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The import reader sees files for other systems (a _windows.go file, a
// build tag) and skips only `//go:build ignore` programs.
func TestImportAllSeesEveryOS(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":         "package x\n\nimport _ \"strings\"\n",
		"b_windows.go": "package x\n\nimport _ \"github.com/sashabaranov/go-openai\"\n",
		"c_plan9.go":   "//go:build plan9\n\npackage x\n\nimport _ \"github.com/go-git/go-git/v5\"\n",
		"gen.go":       "//go:build ignore\n\npackage main\n\nimport _ \"github.com/spf13/cobra\"\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bp, err := importAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"strings", "github.com/sashabaranov/go-openai", "github.com/go-git/go-git/v5"} {
		if !slices.Contains(bp.Imports, want) {
			t.Errorf("imports %v lack %s", bp.Imports, want)
		}
	}
	if slices.Contains(bp.Imports, "github.com/spf13/cobra") {
		t.Errorf("imports %v include the ignored program's", bp.Imports)
	}
}
