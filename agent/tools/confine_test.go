package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// pathArgs builds, for each tool that takes a path, arguments that use p.
var pathArgs = map[string]func(p string) map[string]any{
	"read_file":  func(p string) map[string]any { return map[string]any{"path": p} },
	"write_file": func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned\n"} },
	"edit_file": func(p string) map[string]any {
		return map[string]any{"path": p, "old_string": "secret", "new_string": "pwned"}
	},
	"list_files": func(p string) map[string]any { return map[string]any{"path": p} },
	"glob":       func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} },
	"grep":       func(p string) map[string]any { return map[string]any{"pattern": "secret", "path": p} },
}

func TestConfinementRefusals(t *testing.T) {
	e := newEnv(t, nil)
	harness := filepath.Join(".grub", testTaskID)
	for _, name := range []string{"state.json", "lock", "control.json", "control.lock"} {
		e.write(filepath.Join(harness, name), "secret\n")
	}
	e.write(".grub/ffffffff/state.json", "secret\n")
	e.symlink(e.outside, "outlink")
	e.symlink(filepath.Join(e.outside, "secret.txt"), "secretlink")
	e.symlink("../outside/new.txt", "dangling")
	e.symlink(filepath.Join(e.ws, harness, "state.json"), "statelink")
	if err := os.MkdirAll(filepath.Join(e.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		path string
		want string // in the refusal
	}{
		{"dot-dot", "../outside/secret.txt", "leaves the workspace"},
		{"dot-dot after a folder", "sub/../../outside/secret.txt", "leaves the workspace"},
		{"dot-dot to the parent", "..", "leaves the workspace"},
		{"absolute outside", filepath.Join(e.outside, "secret.txt"), "outside the workspace"},
		{"absolute root", "/", "outside the workspace"},
		{"symlinked folder outside", "outlink/secret.txt", "symbolic link"},
		{"symlinked folder itself", "outlink", "symbolic link"},
		{"symlinked file outside", "secretlink", "symbolic link"},
		{"dangling symlink outside", "dangling", "symbolic link"},
		{"state.json", harness + "/state.json", "state.json is written only by grub"},
		{"state.json of another task", ".grub/ffffffff/state.json", "state.json is written only by grub"},
		{"state.json other case", ".grub/" + testTaskID + "/STATE.json", "state.json is written only by grub"},
		{"state.json absolute", filepath.Join(e.ws, harness, "state.json"), "state.json is written only by grub"},
		{"state.json by a dotted path", "sub/../.grub/" + testTaskID + "/./state.json", "state.json is written only by grub"},
		{"state.json through a symlink", "statelink", "state.json is written only by grub"},
		{"lock", harness + "/lock", "lock is the runner lock"},
		{"control.json", harness + "/control.json", "control.json is the control queue"},
		{"control.lock", harness + "/control.lock", "control.lock guards"},
		{"empty", "", "path is empty"},
	}
	for _, tc := range tests {
		for tool, args := range pathArgs {
			if tc.path == "" && (tool == "list_files" || tool == "glob" || tool == "grep") {
				continue // an empty path means the root for these
			}
			t.Run(tc.name+"/"+tool, func(t *testing.T) {
				res := e.run(tool, args(tc.path))
				if !res.IsError || !strings.Contains(res.Text, tc.want) {
					t.Errorf("got IsError=%v %q, want a refusal containing %q", res.IsError, res.Text, tc.want)
				}
			})
		}
	}
	// Nothing outside or protected was changed or created.
	if b, _ := os.ReadFile(filepath.Join(e.outside, "secret.txt")); string(b) != "secret\n" {
		t.Errorf("outside/secret.txt = %q, want it untouched", b)
	}
	if _, err := os.Lstat(filepath.Join(e.outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("outside/new.txt was created through the dangling link (err %v)", err)
	}
	if got := e.read(harness + "/state.json"); got != "secret\n" {
		t.Errorf("state.json = %q, want it untouched", got)
	}
}

func TestConfinementAllows(t *testing.T) {
	e := newEnv(t, nil)
	e.write("src/a.txt", "secret in the workspace\n")
	e.write(".grub/"+testTaskID+"/feature-list.json", "{\"secret\":1}\n")
	e.symlink("src", "srclink")
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": filepath.Join(e.ws, "src/a.txt")}, "secret in the workspace"},
		{"read_file", map[string]any{"path": "./src/../src/a.txt"}, "secret in the workspace"},
		{"read_file", map[string]any{"path": "srclink/a.txt"}, "secret in the workspace"},
		{"read_file", map[string]any{"path": ".grub/" + testTaskID + "/feature-list.json"}, "secret"},
		{"edit_file", map[string]any{"path": ".grub/" + testTaskID + "/feature-list.json", "old_string": "secret", "new_string": "x"}, "replaced 1"},
		{"write_file", map[string]any{"path": ".grub/" + testTaskID + "/progress-log.md", "content": "note\n"}, "wrote 5 bytes"},
		{"list_files", map[string]any{"path": e.ws}, "src/"},
		{"grep", map[string]any{"pattern": "secret", "path": "srclink"}, "src/a.txt:1:"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := e.run(tc.tool, tc.args)
			if res.IsError || !strings.Contains(res.Text, tc.want) {
				t.Errorf("got IsError=%v %q, want success containing %q", res.IsError, res.Text, tc.want)
			}
		})
	}
}

// A workspace configured through a symlink accepts absolute paths in
// either spelling and still refuses what is outside.
func TestConfinementSymlinkedWorkspace(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a.txt", "hello\n")
	alias := filepath.Join(filepath.Dir(e.ws), "alias")
	if err := os.Symlink(e.ws, alias); err != nil {
		t.Fatal(err)
	}
	tl := NewReadFileTool(DefaultConfig(alias, filepath.Join(alias, ".grub", testTaskID, "spill")))
	e.tools = map[string]Tool{"read_file": tl}
	for _, p := range []string{filepath.Join(alias, "a.txt"), filepath.Join(e.ws, "a.txt"), "a.txt"} {
		if res := e.run("read_file", map[string]any{"path": p}); res.IsError || !strings.Contains(res.Text, "hello") {
			t.Errorf("read %s: IsError=%v %q, want the file", p, res.IsError, res.Text)
		}
	}
	if res := e.run("read_file", map[string]any{"path": filepath.Join(e.outside, "secret.txt")}); !res.IsError {
		t.Errorf("read outside through an aliased workspace: %q, want a refusal", res.Text)
	}
}

func TestProtectedRel(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{".grub/0a1b2c3d/state.json", true},
		{".grub/anything/lock", true},
		{".GRUB/x/Control.Json", true},
		{".grub/x/control.lock", true},
		{".grub/x/feature-list.json", false},
		{".grub/x/spill/state.json", false},
		{"state.json", false},
		{"src/.grub/x/state.json", false},
		{".grub/state.json", false},
	}
	for _, tc := range tests {
		if _, got := protectedRel(harness.GrubDirName, harness.ProtectedFiles(), tc.rel); got != tc.want {
			t.Errorf("protectedRel(%q) = %v, want %v", tc.rel, got, tc.want)
		}
	}
	// The tools protect the names they are told, and only those.
	custom := map[string]string{"notes.md": "notes.md is private"}
	if why, ok := protectedRel(harness.GrubDirName, custom, ".grub/x/Notes.md"); !ok || !strings.HasPrefix(why, "notes.md is private") {
		t.Errorf("protectedRel(custom, notes.md) = %q, %v", why, ok)
	}
	if _, ok := protectedRel(harness.GrubDirName, nil, ".grub/x/state.json"); ok {
		t.Error("protectedRel(nil, state.json) protects a name it was not told")
	}
	// And only in the tasks folder they are told.
	if _, ok := protectedRel("tasks", harness.ProtectedFiles(), ".grub/x/state.json"); ok {
		t.Error("protectedRel(tasks, .grub/x/state.json) protects outside its tasks folder")
	}
	if _, ok := protectedRel("", harness.ProtectedFiles(), ".grub/x/state.json"); ok {
		t.Error("protectedRel with no tasks folder protects a file")
	}
}

// A workspace that disappears is a machinery failure, not a model mistake.
func TestWorkspaceGoneIsGoError(t *testing.T) {
	e := newEnv(t, nil)
	if err := os.RemoveAll(e.ws); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string]map[string]any{
		"read_file":  {"path": "a.txt"},
		"write_file": {"path": "a.txt", "content": "x"},
		"grep":       {"pattern": "x"},
		"shell":      {"command": "true"},
	} {
		if res, err := e.runErr(t.Context(), name, args); err == nil {
			t.Errorf("%s in a removed workspace: no Go error (%+v)", name, res)
		}
	}
}

// The attack of issue 9: the agent replaces its task's spill folder (or
// its transcript folder, or a file in them) with a link and reads through
// it. Every tool refuses, naming the link; nothing outside is touched.
func TestConfinementGrubFolderLinks(t *testing.T) {
	task := ".grub/" + testTaskID
	tests := []struct {
		name  string
		plant func(e *env)
		path  func(e *env) string
		want  string
	}{
		{"spill folder linked to the outside", func(e *env) { e.symlink(e.outside, task+"/spill") },
			func(*env) string { return task + "/spill/secret.txt" }, task + "/spill is a symbolic link"},
		{"spill folder linked to /", func(e *env) { e.symlink("/", task+"/spill") },
			func(e *env) string { return task + "/spill" + filepath.ToSlash(e.outside) + "/secret.txt" }, task + "/spill is a symbolic link"},
		{"spill folder itself", func(e *env) { e.symlink(e.outside, task+"/spill") },
			func(*env) string { return task + "/spill" }, "is a symbolic link"},
		{"spill folder linked inside the workspace", func(e *env) { e.write("src/secret.txt", "secret\n"); e.symlink("../../src", task+"/spill") },
			func(*env) string { return task + "/spill/secret.txt" }, task + "/spill is a symbolic link"},
		{"transcript folder linked", func(e *env) { e.symlink(e.outside, task+"/turns") },
			func(*env) string { return task + "/turns/secret.txt" }, task + "/turns is a symbolic link"},
		{"task folder linked", func(e *env) {
			if err := os.RemoveAll(filepath.Join(e.ws, task)); err != nil {
				t.Fatal(err)
			}
			e.symlink(e.outside, task)
		}, func(*env) string { return task + "/secret.txt" }, task + " is a symbolic link"},
		{"link inside the spill folder", func(e *env) { e.write(task+"/spill/keep.txt", "x\n"); e.symlink(e.outside, task+"/spill/out") },
			func(*env) string { return task + "/spill/out/secret.txt" }, "resolves through the symbolic link " + task + "/spill/out"},
	}
	for _, tc := range tests {
		for tool, args := range pathArgs {
			t.Run(tc.name+"/"+tool, func(t *testing.T) {
				e := newEnv(t, nil)
				tc.plant(e)
				res := e.run(tool, args(tc.path(e)))
				if !res.IsError || !strings.Contains(res.Text, tc.want) || strings.Contains(res.Text, "secret\n") {
					t.Errorf("got IsError=%v %q, want a refusal containing %q", res.IsError, res.Text, tc.want)
				}
				if b, _ := os.ReadFile(filepath.Join(e.outside, "secret.txt")); string(b) != "secret\n" {
					t.Errorf("outside/secret.txt = %q, want it untouched", b)
				}
			})
		}
	}
}

// A spill folder configured outside the workspace may be read, but not
// once it has been replaced by a link: what the link reaches is refused.
func TestConfinementOutsideSpillLinked(t *testing.T) {
	var spillDir string
	e := newEnv(t, func(c *Config) {
		spillDir = filepath.Join(filepath.Dir(c.Workspace), "spill")
		c.SpillDir = spillDir
	})
	e.writeAbs(filepath.Join(spillDir, "shell-1.txt"), "spilled\n")
	if res := e.run("read_file", map[string]any{"path": filepath.Join(spillDir, "shell-1.txt")}); res.IsError {
		t.Fatalf("read the outside spill folder: %q", res.Text)
	}
	if err := os.RemoveAll(spillDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.outside, spillDir); err != nil {
		t.Fatal(err)
	}
	for tool, args := range pathArgs {
		for _, p := range []string{filepath.Join(spillDir, "secret.txt"), spillDir} {
			res := e.run(tool, args(p))
			want := "symbolic link"
			if tool == "write_file" || tool == "edit_file" {
				want = "outside the workspace" // never allowed there
			}
			if !res.IsError || !strings.Contains(res.Text, want) {
				t.Errorf("%s %s through a linked outside spill folder: IsError=%v %q, want a refusal", tool, p, res.IsError, res.Text)
			}
		}
	}
}
