package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// testTaskID is the id of the task whose harness folder the tests use.
const testTaskID = "0a1b2c3d"

// env is a workspace with the tools built on it, and a folder outside it.
type env struct {
	t       testing.TB
	ws      string // the workspace root, symlinks resolved
	outside string // a folder next to the workspace, holding secret.txt
	cfg     Config
	tools   map[string]Tool
}

// newEnv builds a workspace under a temporary folder, a secret file
// outside it, and every tool; mod may change the configuration first.
func newEnv(t testing.TB, mod func(*Config)) *env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ws: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside")}
	for _, d := range []string{e.ws, e.outside, filepath.Join(e.ws, ".grub", testTaskID)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.writeAbs(filepath.Join(e.outside, "secret.txt"), "secret\n")
	e.cfg = DefaultConfig(e.ws, filepath.Join(e.ws, ".grub", testTaskID, "spill"))
	e.cfg.TasksDir, e.cfg.Protected, e.cfg.ReadOnly, e.cfg.Skipped = harness.GrubDirName, harness.ProtectedFiles(), harness.ReadOnlyFiles(), harness.SkippedDirs()
	if mod != nil {
		mod(&e.cfg)
	}
	all, err := All(e.cfg)
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	e.tools = map[string]Tool{}
	for _, tl := range all {
		e.tools[tl.Name()] = tl
	}
	return e
}

// run calls tool name with args (marshalled to JSON) and fails the test on
// a Go error.
func (e *env) run(name string, args any) Result {
	e.t.Helper()
	res, err := e.runErr(context.Background(), name, args)
	if err != nil {
		e.t.Fatalf("%s %v: Go error %v", name, args, err)
	}
	return res
}

func (e *env) runErr(ctx context.Context, name string, args any) (Result, error) {
	e.t.Helper()
	tl, ok := e.tools[name]
	if !ok {
		e.t.Fatalf("no tool %q", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	return tl.Run(ctx, raw)
}

// write creates the workspace file rel with content.
func (e *env) write(rel, content string) {
	e.t.Helper()
	e.writeAbs(filepath.Join(e.ws, rel), content)
}

func (e *env) writeAbs(path, content string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// read returns the content of the workspace file rel.
func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// symlink makes the workspace entry rel a link to dest.
func (e *env) symlink(dest, rel string) {
	e.t.Helper()
	if err := os.Symlink(dest, filepath.Join(e.ws, rel)); err != nil {
		e.t.Fatal(err)
	}
}
