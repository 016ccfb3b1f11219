package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
)

func TestSliceAndHookFlags(t *testing.T) {
	var start *StartOptions
	err := runCmd(t, NewCmdStart(testFactory(), func(o *StartOptions) error { start = o; return nil }),
		[]string{"goal", "--agent-cmd", "a", "--for", "5h30m", "--on-turn", "git push", "--on-stop", "notify", "--hook-timeout", "90s"})
	if err != nil {
		t.Fatal(err)
	}
	if start.Slice != 5*time.Hour+30*time.Minute || start.Hooks != (harness.Hooks{OnTurn: "git push", OnStop: "notify", TimeoutSeconds: 90}) {
		t.Errorf("start: slice %s, hooks %+v", start.Slice, start.Hooks)
	}
	// Without the flags: no slice, no hooks, the default timeout.
	err = runCmd(t, NewCmdStart(testFactory(), func(o *StartOptions) error { start = o; return nil }), []string{"goal", "--agent-cmd", "a"})
	if err != nil || start.Slice != 0 || start.Hooks != (harness.Hooks{}) || start.Hooks.Timeout() != 5*time.Minute {
		t.Errorf("start without flags: %v, slice %s, hooks %+v", err, start.Slice, start.Hooks)
	}

	var resume *ResumeOptions
	err = runCmd(t, NewCmdResume(testFactory(), func(o *ResumeOptions) error { resume = o; return nil }), []string{"--for", "1h", "--on-turn", ""})
	if err != nil {
		t.Fatal(err)
	}
	h := harness.Hooks{OnTurn: "old", OnStop: "kept"}
	if err := resume.Hooks(&h); err != nil || resume.Slice != time.Hour || h != (harness.Hooks{OnStop: "kept"}) {
		t.Errorf("resume: %v, slice %s, hooks %+v", err, resume.Slice, h)
	}

	for _, args := range [][]string{
		{"goal", "--agent-cmd", "a", "--for", "0s"},
		{"goal", "--agent-cmd", "a", "--for", "-1h"},
		{"goal", "--agent-cmd", "a", "--for", "90500ms"},
		{"goal", "--agent-cmd", "a", "--hook-timeout", "500ms"},
	} {
		err := runCmd(t, NewCmdStart(testFactory(), func(*StartOptions) error { return nil }), args)
		if code := ExitCode(err); code != ExitUsage {
			t.Errorf("%q: exit %d (%v), want a usage error", args, code, err)
		}
	}
}

func TestEditHooksIdle(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Hooks.OnStop = "notify" })

	code, _, errOut := e.run("edit", "--on-turn", "git push origin HEAD:grub/0a1b2c3d", "--hook-timeout", "2m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := harness.Hooks{OnTurn: "git push origin HEAD:grub/0a1b2c3d", OnStop: "notify", TimeoutSeconds: 120}
	if h := e.state("0a1b2c3d").Hooks; h != want {
		t.Errorf("hooks %+v, want %+v", h, want)
	}
	for _, line := range []string{"task 0a1b2c3d: on-turn hook none → git push origin HEAD:grub/0a1b2c3d", "task 0a1b2c3d: hook timeout 5m → 2m"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("stderr %q lacks %q", errOut, line)
		}
	}
	log, _ := os.ReadFile(e.store.Path("0a1b2c3d", harness.FileProgressLog))
	if !strings.Contains(string(log), "- Hook: on-turn hook none → git push origin HEAD:grub/0a1b2c3d\n") {
		t.Errorf("progress log:\n%s", log)
	}

	// '' removes a hook; the others stay.
	if code, _, errOut := e.run("edit", "--on-turn", ""); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if h := e.state("0a1b2c3d").Hooks; h != (harness.Hooks{OnStop: "notify", TimeoutSeconds: 120}) {
		t.Errorf("hooks after removal %+v", h)
	}
	// The same again changes nothing.
	if code, _, errOut := e.run("edit", "--on-turn", ""); code != 0 || !strings.Contains(errOut, "nothing changed") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestEditHooksOfARunningTaskQueuesARequest(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, func(st *harness.State) { st.Status = harness.StatusRunning; st.Hooks.OnTurn = "old" })
	e.lock("0a1b2c3d")
	if code, _, errOut := e.run("edit", "--on-stop", "notify"); code != 0 || !strings.Contains(errOut, "requested edit") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	reqs, err := e.store.TakeControl("0a1b2c3d")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].Kind != harness.ControlHooks || *reqs[0].Hooks != (harness.Hooks{OnTurn: "old", OnStop: "notify"}) {
		t.Errorf("requests %+v", reqs)
	}
}
