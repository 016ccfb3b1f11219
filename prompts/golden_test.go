package prompts

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the current templates")

// testPaths are the harness paths of the fixed fixtures.
func testPaths() Paths {
	return Paths{
		HarnessDir:  ".grub/0a1b2c3d",
		FeatureList: ".grub/0a1b2c3d/feature-list.json",
		ProgressLog: ".grub/0a1b2c3d/progress-log.md",
		InitScript:  ".grub/0a1b2c3d/init.sh",
		Checklist:   ".grub/0a1b2c3d/feature-checklist.md",
		StateFile:   ".grub/0a1b2c3d/state.json",
	}
}

const testGoal = "Add OAuth login (GitHub & Google) to the API; keep /healthz public."

func baseInitializer(locale string) Initializer {
	return Initializer{
		Locale:      locale,
		TaskID:      "0a1b2c3d",
		Goal:        testGoal,
		Paths:       testPaths(),
		MinFeatures: 15,
		MaxFeatures: 40,
		Iteration:   1,
	}
}

// baseExecution is the fixed Execution fixture every execution golden file
// starts from.
func baseExecution(locale string) Execution {
	return Execution{
		Locale:        locale,
		TaskID:        "0a1b2c3d",
		Goal:          testGoal,
		Paths:         testPaths(),
		Iteration:     7,
		MaxIterations: 25,
		Passing:       5,
		Total:         18,
		Next: &FeatureRef{
			ID:          "oauth-callback-issues-session",
			Category:    "functional",
			Description: "GET /auth/callback exchanges the provider code for a token and sets a session cookie.",
			Steps: []string{
				"Start the API with a fake OAuth provider",
				"Request /auth/callback?code=valid&state=s1",
				"Expect 302 to / and a Set-Cookie header named session",
			},
			Verify: "go test ./auth -run TestCallbackIssuesSession",
		},
		LastInit: &Check{
			Command:    ".grub/0a1b2c3d/init.sh",
			ExitCode:   0,
			Passed:     true,
			OutputTail: "== go build ./...\n== go test -short ./...\nok  \texample.com/api/auth\t0.412s\n",
		},
		LastDecision: &Decision{
			Status:   "continue",
			Summary:  "Added the provider registry and the /auth/login redirect.",
			NextStep: "Implement the callback handler.",
		},
		TokensUsed:  412000,
		TokenBudget: 2000000,
	}
}

type goldenCase struct {
	name   string
	render func(locale string) (string, error)
}

func goldenCases() []goldenCase {
	exec := func(edit func(*Execution)) func(string) (string, error) {
		return func(locale string) (string, error) {
			p := baseExecution(locale)
			edit(&p)
			return RenderExecution(p)
		}
	}
	initr := func(edit func(*Initializer)) func(string) (string, error) {
		return func(locale string) (string, error) {
			p := baseInitializer(locale)
			edit(&p)
			return RenderInitializer(p)
		}
	}
	longOutput := strings.Repeat("--- FAIL: TestSomething (0.00s)\n", 100) + "FAIL\texample.com/api/auth\t0.731s\n"
	return []goldenCase{
		{"initializer-first", initr(func(*Initializer) {})},
		{"initializer-after-failure", initr(func(p *Initializer) {
			p.Iteration = 2
			p.Failure = `.grub/0a1b2c3d/feature-list.json: 9 features, want between 15 and 40; /features/3/id: "Login_Form" is not kebab-case`
		})},
		{"initializer-recovered", initr(func(p *Initializer) {
			p.Iteration = 2
			p.RecoveredUnknownTurn = true
		})},
		{"initializer-answer", initr(func(p *Initializer) {
			p.Iteration = 2
			p.Question = "Which database: Postgres or SQLite?"
			p.Answer = "SQLite <for now> & keep it simple"
		})},
		{"initializer-objective-steer", initr(func(p *Initializer) {
			p.ObjectiveUpdated = &GoalChange{Old: "Add OAuth login to the API", New: testGoal}
			p.Steer = []string{"Use the standard library's net/http, no web framework."}
		})},
		{"execution-plain", exec(func(*Execution) {})},
		{"execution-failure", exec(func(p *Execution) {
			p.Failure = "verification of \"oauth-login-redirects\" failed: `go test ./auth -run TestLoginRedirect` exited 1; the flip was reverted.\n--- FAIL: TestLoginRedirect (0.01s)\n    login_test.go:42: got 200, want 302\nFAIL"
		})},
		{"execution-recovered", exec(func(p *Execution) {
			p.RecoveredUnknownTurn = true
			p.LastDecision = &Decision{Status: "unknown", Summary: "grub stopped during turn 6; its outcome is unknown"}
		})},
		{"execution-completion-rejected", exec(func(p *Execution) {
			p.CompletionRejected = "13 of 18 features are still pending; the first is oauth-callback-issues-session"
			p.LastDecision = &Decision{Status: "complete", Summary: "Login works."}
		})},
		{"execution-audit-regression", exec(func(p *Execution) {
			p.AuditRegression = "regression found in turn 17 by the completion audit: feature `oauth-login-redirects` passed (its check last passed in turn 9), but on the tree this turn left, its verify command `go test ./auth -run TestLoginRedirect` exited 1; grub set it back to passes: false."
			p.LastDecision = &Decision{Status: "complete", Summary: "Every feature works."}
		})},
		{"execution-blocked-reexamine", exec(func(p *Execution) {
			p.BlockedReexamine = "No GitHub OAuth client secret is available in the environment."
			p.LastDecision = &Decision{Status: "blocked", Summary: "Cannot test against GitHub.", Blocker: "No GitHub OAuth client secret is available in the environment."}
		})},
		{"execution-objective-updated", exec(func(p *Execution) {
			p.ObjectiveUpdated = &GoalChange{Old: "Add OAuth login to the API", New: testGoal}
		})},
		{"execution-steer-answer", exec(func(p *Execution) {
			p.Steer = []string{"Keep sessions in memory for now; no database.", "Write table tests."}
			p.Answer = "Use GitHub only; Google can wait."
			p.Question = "GitHub only, or GitHub and Google?"
			p.LastDecision = &Decision{Status: "blocked", Summary: "Need a decision on providers.", Blocker: "Two providers double the work.", Question: "GitHub only, or GitHub and Google?"}
		})},
		{"execution-answer-option", exec(func(p *Execution) {
			p.Next.Verify = "test -f b.txt && grep -q '<a href=\"/login\">' b.txt"
			p.Question = "Which provider first?"
			p.Options = []string{"GitHub", "Google", "both at once"}
			p.Answer, p.Choice = "2", 2
		})},
		{"execution-all-passing", exec(func(p *Execution) {
			p.Passing, p.Total, p.Next = 18, 18, nil
			p.LastInit = &Check{Command: ".grub/0a1b2c3d/init.sh", ExitCode: 1, OutputTail: longOutput}
		})},
		{"wrap-up", func(locale string) (string, error) {
			return RenderWrapUp(WrapUp{Locale: locale, Reason: "The token budget is spent: 2000153 of 2000000 tokens used."})
		}},
	}
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		for _, locale := range Locales {
			t.Run(c.name+"."+locale, func(t *testing.T) {
				got, err := c.render(locale)
				if err != nil {
					t.Fatal(err)
				}
				file := filepath.Join("testdata", "golden", c.name+"."+locale+".txt")
				if *update {
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run `go test ./prompts -update` to create it)", err)
				}
				if !bytes.Equal([]byte(got), want) {
					t.Errorf("%s differs from the rendered prompt (run `go test ./prompts -update` and review the diff)\n--- got ---\n%s", file, got)
				}
			})
		}
	}
}

// TestGoldenFilesAreAllUsed fails on a golden file no case renders, so a
// renamed case cannot leave a stale file behind.
func TestGoldenFilesAreAllUsed(t *testing.T) {
	want := map[string]bool{}
	for _, c := range goldenCases() {
		for _, locale := range Locales {
			want[c.name+"."+locale+".txt"] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("testdata/golden/%s belongs to no golden case: delete it", e.Name())
		}
	}
}
