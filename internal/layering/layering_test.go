package layering

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/grub-dev/grub"

// leaves import only the standard library, schemas (the one wrapper of the
// JSON Schema library) and other leaves.
var leaves = []string{
	"agent",
	"events",
	"featurelist",
	"internal/atomicfile",
	"internal/failpoint",
	"internal/netproxy",
	"internal/proc",
	"internal/termsafe",
	"loopstate",
	"prompts",
	"schemas",
	"templates",
}

// never lists, for a package, what it must not reach, directly or through
// any package it imports.
var never = map[string][]string{
	"controller": {
		"github.com/sashabaranov/go-openai",
		"github.com/go-git/go-git/v5",
		module + "/internal/cli",
		module + "/internal/llm",
		module + "/internal/gitx",
		module + "/agent/backend",
	},
	"harness": {
		"github.com/sashabaranov/go-openai",
		"github.com/go-git/go-git/v5",
		module + "/controller",
		module + "/internal/cli",
		module + "/agent/backend",
	},
	"agent/backend": {
		"github.com/go-git/go-git/v5",
		module + "/controller",
		module + "/harness",
		module + "/internal/cli",
	},
	"internal/report": {
		"github.com/go-git/go-git/v5",
		module + "/internal/gitx",
		module + "/internal/cli",
		module + "/controller",
	},
	"internal/mcpserver": {
		"github.com/spf13/cobra",
		"github.com/go-git/go-git/v5",
		module + "/internal/cli",
		module + "/controller",
		module + "/harness",
	},
	"agent/tools": {
		"github.com/sashabaranov/go-openai",
		module + "/controller",
		module + "/harness",
		module + "/internal/cli",
	},
}

// owner names the one package that may import each third-party library.
var owner = map[string]string{
	"github.com/sashabaranov/go-openai":        "internal/llm",
	"github.com/go-git/go-git/v5":              "internal/gitx",
	"github.com/go-git/go-billy/v5":            "internal/gitx",
	"github.com/santhosh-tekuri/jsonschema/v5": "schemas",
	"github.com/spf13/cobra":                   "internal/cli",
	"github.com/spf13/pflag":                   "internal/cli",
	"github.com/mattn/go-runewidth":            "internal/cli",
	"github.com/fsnotify/fsnotify":             "harness",
	"golang.org/x/sys":                         "harness",
	"github.com/landlock-lsm/go-landlock":      "internal/sandbox",
	"golang.org/x/net/bpf":                     "internal/sandbox",
	"github.com/rogpeppe/go-internal":          "cmd/grub",
	"golang.org/x/term":                        "internal/cli",
	"github.com/pelletier/go-toml/v2":          "internal/config",
	"github.com/modelcontextprotocol/go-sdk":   "internal/mcpserver",
}

// pkg is one package of the module with its imports (tests excluded: what
// a test links is not what users run).
type pkg struct {
	rel     string
	imports []string
}

func load(t *testing.T) map[string]pkg {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	pkgs := map[string]pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
			return filepath.SkipDir
		}
		bp, err := importAll(path)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		pkgs[rel] = pkg{rel: rel, imports: bp.Imports}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	return pkgs
}

// importAll reads the package in dir with the files of every OS and
// architecture and every build tag (a controller_windows.go importing
// go-openai must not pass because the tests run on Linux), leaving out
// only files marked `//go:build ignore` (programs run with go run).
func importAll(dir string) (*build.Package, error) {
	ctx := build.Default
	ctx.UseAllFiles = true
	ctx.ReadDir = func(d string) ([]fs.FileInfo, error) {
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		var out []fs.FileInfo
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".go") && ignored(filepath.Join(d, e.Name())) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				return nil, err
			}
			out = append(out, fi)
		}
		return out, nil
	}
	return ctx.ImportDir(dir, 0)
}

// ignored reports whether the Go file at path has a `//go:build ignore`
// constraint before its package clause.
func ignored(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "//go:build ") && strings.Fields(line)[1] == "ignore" {
			return true
		}
	}
	return false
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func local(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

// thirdParty maps an import path to the library (module-ish root) it
// belongs to, as named in owner.
func thirdParty(path string) string {
	for lib := range owner {
		if path == lib || strings.HasPrefix(path, lib+"/") {
			return lib
		}
	}
	return path
}

// reach returns every import path reachable from rel through module
// packages, including third-party paths (not followed further).
func reach(pkgs map[string]pkg, rel string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(r string) {
		for _, imp := range pkgs[r].imports {
			if isStd(imp) || seen[imp] {
				continue
			}
			seen[imp] = true
			if l, ok := local(imp); ok {
				walk(l)
			}
		}
	}
	walk(rel)
	return seen
}

func TestLeavesImportOnlyLeaves(t *testing.T) {
	pkgs := load(t)
	for _, leaf := range leaves {
		p, ok := pkgs[leaf]
		if !ok {
			t.Errorf("leaf %s not found", leaf)
			continue
		}
		for _, imp := range p.imports {
			if isStd(imp) {
				continue
			}
			if l, ok := local(imp); ok && slices.Contains(leaves, l) {
				continue
			}
			if leaf == "schemas" && thirdParty(imp) == "github.com/santhosh-tekuri/jsonschema/v5" {
				continue
			}
			t.Errorf("%s is a leaf but imports %s", leaf, imp)
		}
	}
}

func TestForbiddenReach(t *testing.T) {
	pkgs := load(t)
	for from, banned := range never {
		if _, ok := pkgs[from]; !ok {
			t.Errorf("package %s not found", from)
			continue
		}
		got := reach(pkgs, from)
		for _, b := range banned {
			for imp := range got {
				if imp == b || strings.HasPrefix(imp, b+"/") {
					t.Errorf("%s reaches %s (through %s); see the layering rules in docs/ARCHITECTURE.md", from, b, imp)
				}
			}
		}
	}
}

func TestOneImporterPerLibrary(t *testing.T) {
	pkgs := load(t)
	importers := map[string][]string{}
	for rel, p := range pkgs {
		for _, imp := range p.imports {
			if isStd(imp) {
				continue
			}
			if _, ok := local(imp); ok {
				continue
			}
			lib := thirdParty(imp)
			if !slices.Contains(importers[lib], rel) {
				importers[lib] = append(importers[lib], rel)
			}
		}
	}
	for lib, by := range importers {
		sort.Strings(by)
		want, ok := owner[lib]
		if !ok {
			t.Errorf("%s is imported by %v but has no owner in the layering rules", lib, by)
			continue
		}
		if len(by) != 1 || by[0] != want {
			t.Errorf("%s is imported by %v; only %s may import it", lib, by, want)
		}
	}
}

// TestReachIsTransitive shows the rule check sees an import made through
// another package, not only direct ones.
func TestReachIsTransitive(t *testing.T) {
	pkgs := map[string]pkg{
		"controller":   {imports: []string{"fmt", module + "/harness"}},
		"harness":      {imports: []string{module + "/internal/llm"}},
		"internal/llm": {imports: []string{"github.com/sashabaranov/go-openai"}},
	}
	got := reach(pkgs, "controller")
	for _, want := range []string{module + "/harness", module + "/internal/llm", "github.com/sashabaranov/go-openai"} {
		if !got[want] {
			t.Errorf("reach(controller) lacks %s: %v", want, got)
		}
	}
}

// TestLauncherPackageStaysSmall holds internal/sandbox/launch, whose
// initialiser runs the sandbox launcher before the rest of grub
// initialises, to what the launcher needs: the module packages it
// reaches are internal/sandbox alone, and no library but go-landlock and
// x/net/bpf (the seccomp filter's assembler, which initialises nothing).
// Another import would initialise (and cost) before the launcher runs.
func TestLauncherPackageStaysSmall(t *testing.T) {
	pkgs := load(t)
	if _, ok := pkgs["internal/sandbox/launch"]; !ok {
		t.Fatal("internal/sandbox/launch not found")
	}
	for imp := range reach(pkgs, "internal/sandbox/launch") {
		if imp == module+"/internal/sandbox" || thirdParty(imp) == "github.com/landlock-lsm/go-landlock" || thirdParty(imp) == "golang.org/x/net/bpf" {
			continue
		}
		t.Errorf("internal/sandbox/launch reaches %s: the launcher runs before it initialises only with internal/sandbox and the standard library", imp)
	}
}
