package templates

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./templates -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the rendering (run with -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestProgressLogHeader(t *testing.T) {
	golden(t, "header.md", ProgressLogHeader("0a1b2c3d", "add OAuth login to the API\n\nkeep the old password login working"))
}

func TestRenderEntry(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	cases := []struct {
		name  string
		entry Entry
	}{
		{"entry-execution.md", Entry{
			Iteration: 3, Phase: "execution", Feature: "login-form", Decision: "continue",
			Summary:      "Added the login form and its handler.",
			NextStep:     "Wire the session cookie.",
			Verification: "init.sh passed; verify `go test ./auth` passed",
			At:           at,
			InputTokens:  1234567, CachedInputTokens: 1000000, OutputTokens: 4321, Requests: 12,
			Elapsed: 95*time.Second + 400*time.Millisecond,
		}},
		{"entry-failure.md", Entry{
			Iteration: 4, Phase: "execution", Feature: "odd`id", Decision: "failed",
			Summary:  "Tried twice.",
			Failure:  "the feature list broke the rules:\n- feature `a` changed its description\n\n- two features flipped",
			Requests: 1, UsageEstimated: true,
			Note: "\nThe user steered: \"use sqlite\"\n",
		}},
		{"entry-minimal.md", Entry{Iteration: 1, Phase: "initializer"}},
		// Claude Code: a cost; a backend that does not count requests
		// (Requests 0) has the figure left out, not shown as 0.
		{"entry-cost.md", Entry{
			Iteration: 5, Phase: "execution", Decision: "continue", Summary: "Done.",
			InputTokens: 500, CachedInputTokens: 400, OutputTokens: 50,
			CostUSD: 0.0123, CostReported: true, Elapsed: 3 * time.Second,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := RenderEntry(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, got)
		})
	}
}

func TestFormatUSD(t *testing.T) {
	for _, c := range []struct {
		usd  float64
		want string
	}{
		{0, "$0.00"}, {1.234, "$1.23"}, {12.3, "$12.30"}, {0.5, "$0.50"}, {0.0042, "$0.0042"},
		{0.01234, "$0.0123"}, {0.00001, "<$0.0001"}, {0.99999, "$1.00"},
	} {
		if got := FormatUSD(c.usd); got != c.want {
			t.Errorf("FormatUSD(%v) = %q, want %q", c.usd, got, c.want)
		}
	}
}

func TestRenderEntryRejectsBadEntries(t *testing.T) {
	for _, e := range []Entry{{Iteration: 1}, {Iteration: -1, Phase: "execution"}, {Iteration: 2, Phase: "  "}} {
		if _, err := RenderEntry(e); err == nil {
			t.Errorf("RenderEntry(%+v) succeeded, want an error", e)
		}
	}
}

func TestRenderChecklist(t *testing.T) {
	cases := []struct {
		name  string
		items []ChecklistItem
	}{
		{"checklist-unplanned.md", nil},
		{"checklist-empty.md", []ChecklistItem{}},
		{"checklist.md", []ChecklistItem{
			{ID: "login-form", Category: "functional", Description: "A login form posts to /login.", Passes: true, Evidence: "go test ./auth -run TestLoginForm: ok\nscreenshot in docs/login.png"},
			{ID: "session-cookie", Category: "functional", Description: "The session cookie is HttpOnly.\nIt expires after 24h."},
			{ID: "readme-auth", Category: "docs", Description: "The README explains OAuth setup."},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := RenderChecklist("add OAuth login to the API", c.items)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, got)
		})
	}
}

func TestChecklistCounts(t *testing.T) {
	items := []ChecklistItem{
		{ID: "a", Category: "x", Description: "d", Passes: true, Evidence: "e"},
		{ID: "b", Category: "y", Description: "d"},
		{ID: "c", Category: "x", Description: "d", Passes: true, Evidence: "e"},
	}
	got, err := RenderChecklist("g", items)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**2/3 passing** (x 2/2, y 0/1)", "- [x] `a`: d", "- [ ] `b`: d", "- [x] `c`: d"} {
		if !strings.Contains(got, want) {
			t.Errorf("checklist lacks %q:\n%s", want, got)
		}
	}
}

func TestCode(t *testing.T) {
	cases := map[string]string{
		"login-form": "`login-form`",
		"a`b":        "`` a`b ``",
		"`x``":       "``` `x`` ```",
		" padded ":   "`  padded  `",
	}
	for in, want := range cases {
		if got := Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGroup(t *testing.T) {
	cases := map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"}
	for in, want := range cases {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}

// writeTask lays out a workspace with script at .grub/0a1b2c3d/init.sh and
// returns the workspace root and the script path.
func writeTask(t *testing.T, script string) (string, string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ".grub", "0a1b2c3d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "init.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "marker.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, path
}

func TestInitScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	const placeholder = `echo "init.sh: the project smoke check is not written yet: the initializer must replace this line" >&2
exit 1`
	if !strings.HasPrefix(InitScript, "#!/usr/bin/env bash\n") || !strings.Contains(InitScript, "set -euo pipefail") {
		t.Fatalf("InitScript lacks the shebang or strict mode:\n%s", InitScript)
	}
	if !strings.Contains(InitScript, placeholder) {
		t.Fatalf("InitScript lacks the failing placeholder")
	}
	filled := strings.Replace(InitScript, placeholder, `test -f marker.txt && echo smoke-ok`, 1)
	cases := []struct {
		name       string
		script     string
		wantExit   int
		wantStdout string
		wantStderr string
	}{
		{"unfilled template fails", InitScript, 1, "marker.txt", "the initializer must replace this line"},
		{"filled template passes from the workspace root", filled, 0, "smoke-ok", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, path := writeTask(t, c.script)
			// Run it twice from an unrelated directory: it must find the
			// workspace root itself, and be idempotent.
			for run := 0; run < 2; run++ {
				cmd := exec.Command(bash, path)
				cmd.Dir = t.TempDir()
				cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(root))
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != c.wantExit {
					t.Fatalf("run %d: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", run, code, c.wantExit, &stdout, &stderr)
				}
				wantRoot, _ := filepath.EvalSymlinks(root)
				if !strings.Contains(stdout.String(), "== workspace: "+wantRoot) && !strings.Contains(stdout.String(), "== workspace: "+root) {
					t.Errorf("run %d: stdout does not show the workspace root %s:\n%s", run, root, &stdout)
				}
				if !strings.Contains(stdout.String(), c.wantStdout) || !strings.Contains(stderr.String(), c.wantStderr) {
					t.Errorf("run %d: want %q on stdout and %q on stderr, got\nstdout:\n%s\nstderr:\n%s", run, c.wantStdout, c.wantStderr, &stdout, &stderr)
				}
			}
		})
	}
}
