package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/loopstate"
)

// evil sets the window title and clears the screen when printed raw.
const (
	evil        = "ok \x1b]0;title\x07\x1b[2J done"
	evilEscaped = `ok \x1b]0;title\x07\x1b[2J done`
)

// noRawControl fails when out holds a control character other than
// newline and tab.
func noRawControl(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
			t.Errorf("%s prints the raw control character %q:\n%s", what, r, out)
			return
		}
	}
}

// Text from the agent or the user reaches the terminal with its control
// characters escaped: the goal in status and list, the summary, blocker
// and error in status, the progress log in log, the summary in history.
// --json keeps the text exact.
func TestAgentTextIsEscaped(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", 0, func(st *harness.State) {
		st.Goal = "goal " + evil
		d := harness.NewDecision(loopstate.Blocked, "summary "+evil)
		d.Iteration, d.Blocker = 3, "blocker "+evil
		st.LastDecision = &d
		st.LastError = "error " + evil + "\nsecond line"
	})
	if err := e.store.AppendProgress("0a1b2c3d", "- Summary: "+evil); err != nil {
		t.Fatal(err)
	}

	_, out, _ := e.run("status")
	noRawControl(t, "status", out)
	for _, want := range []string{"goal " + evilEscaped, "summary " + evilEscaped, "blocker " + evilEscaped, "error " + evilEscaped + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = e.run("list")
	noRawControl(t, "list", out)
	if !strings.Contains(out, "goal "+evilEscaped) {
		t.Errorf("list lacks the escaped goal:\n%s", out)
	}
	_, out, _ = e.run("log")
	noRawControl(t, "log", out)
	if !strings.Contains(out, "- Summary: "+evilEscaped+"\n") {
		t.Errorf("log lacks the escaped summary:\n%s", out)
	}
	_, out, _ = e.run("status", "--json")
	var v struct{ Goal string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Goal != "goal "+evil {
		t.Errorf("status --json goal = %q (%v), want the exact text", v.Goal, err)
	}

	run := gitBin(t)
	run(e.root, "init", "-q")
	repo, err := gitx.Open(e.root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitTurn(context.Background(), gitx.Turn{TaskID: "0a1b2c3d", Iteration: 1, Feature: "f\x1b[1m", Summary: evil, Status: "running"}); err != nil {
		t.Fatal(err)
	}
	_, out, _ = e.run("history")
	noRawControl(t, "history", out)
	if !strings.Contains(out, evilEscaped) || !strings.Contains(out, `f\x1b[1m`) {
		t.Errorf("history lacks the escaped summary and feature:\n%s", out)
	}
	subject := run(e.root, "log", "-1", "--format=%s")
	noRawControl(t, "the commit subject", subject)
	if !strings.Contains(subject, evilEscaped) {
		t.Errorf("commit subject %q lacks the escaped summary", subject)
	}
}

// gitBin runs the git binary in a folder, skipping the test without one.
func gitBin(t *testing.T) func(dir string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("the git binary is not installed")
	}
	return func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}
