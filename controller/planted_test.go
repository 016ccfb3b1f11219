package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
)

// Control requests the agent writes where grub kept them, the task folder
// (its workspace), are not applied: not the hook, the sandbox off, the
// 99 iterations, the guidance or the pause, however fresh their time.
func TestControlFromTheAgentIsIgnored(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	at := "2099-01-01T00:00:00Z" // never older than the run: not dropped as stale
	req := `{"version":1,"requests":[
{"kind":"hooks","at":"` + at + `","hooks":{"onTurn":"touch PWNED"}},
{"kind":"sandbox","at":"` + at + `","sandbox":{"mode":"off"}},
{"kind":"limits","at":"` + at + `","limits":{"maxIterations":99}},
{"kind":"steer","at":"` + at + `","message":"pwned"},
{"kind":"pause","at":"` + at + `"}]}`
	a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{
		2: func(turn agent.Turn) error {
			return os.WriteFile(filepath.Join(turn.HarnessDir, harness.FileControl), []byte(req), 0o644)
		},
	}}
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete {
		t.Errorf("status %s (%s), want complete: the agent's pause was taken", st.Status, st.StopReason)
	}
	if st.Hooks != (harness.Hooks{}) || st.Sandbox.Mode != "" || st.Limits.MaxIterations != harness.DefaultLimits().MaxIterations {
		t.Errorf("the agent's requests were applied: hooks %+v, sandbox %+v, max iterations %d", st.Hooks, st.Sandbox, st.Limits.MaxIterations)
	}
	if strings.Contains(r.log(), "pwned") || strings.Contains(r.stderr.String(), "by user request") {
		t.Errorf("the agent's guidance or edits were taken:\n%s\n%s", r.log(), r.stderr.String())
	}
}

// plantTask writes, as a hostile turn would, a task folder id holding a
// copy of the task's state with that id, paused, updated in 2099.
func plantTask(r *run, id string) func(agent.Turn) error {
	return func(turn agent.Turn) error {
		data, err := os.ReadFile(filepath.Join(turn.HarnessDir, harness.FileState))
		if err != nil {
			return err
		}
		s := strings.Replace(string(data), `"id": "`+r.id+`"`, `"id": "`+id+`"`, 1)
		dir := filepath.Join(r.store.GrubDir(), id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, harness.FileState), []byte(s), 0o644)
	}
}

// A task folder a turn made is set aside after the turn (with its
// content), fails the turn, and is named in the turn's ledger line, its
// log entry and the next prompt; a task the user made meanwhile stays.
func TestPlantedTaskIsSetAside(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	var users string
	a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{
		2: func(turn agent.Turn) error {
			other := &harness.State{Goal: "the user's other task", Status: harness.StatusPaused, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: harness.AgentCommand}}
			if err := r.store.Create(other); err != nil { // the user's grub start, in another terminal
				return err
			}
			users = other.ID
			return plantTask(r, "deadbeef")(turn)
		},
	}}
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete {
		t.Fatalf("status %s, want complete", st.Status)
	}
	if _, err := os.Lstat(r.store.Dir("deadbeef")); err == nil {
		t.Error(".grub/deadbeef is still there")
	}
	if _, err := os.Lstat(r.store.Dir(users)); err != nil {
		t.Errorf("the user's task was moved: %v", err)
	}
	aside, _ := filepath.Glob(filepath.Join(r.store.GrubDir(), "deadbeef.planted-*", harness.FileState))
	if len(aside) != 1 {
		t.Fatalf("set aside: %v; want the planted state.json kept in one folder", aside)
	}
	turns, err := r.store.LoadTurns(r.id)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range turns {
		for _, f := range tr.Findings {
			if tr.Iteration == 2 && f.Kind == harness.FindingTampering && strings.Contains(f.Text, "made the task folder .grub/deadbeef") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("turn 2's ledger line lacks the finding: %+v", turns)
	}
	if !strings.Contains(r.log(), "only grub creates tasks") {
		t.Errorf("the log does not say it:\n%s", r.log())
	}
	prompt, _ := os.ReadFile(filepath.Join(r.store.Dir(r.id), harness.DirTurns, "0003.prompt.md"))
	if !strings.Contains(string(prompt), ".grub/deadbeef") {
		t.Errorf("the next prompt does not say it:\n%s", prompt)
	}
	tasks, _, _ := r.store.Scan()
	for _, task := range tasks {
		if task.ID == "deadbeef" {
			t.Error("the planted task is still scanned")
		}
	}
}

// A turn grub did not live to referee (killed mid-turn) has its planted
// task folder set aside by the run that recovers it, from the folders
// noted when the turn started.
func TestPlantedTaskIsSetAsideAfterACrash(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	st, err := r.store.LoadState(r.id)
	if err != nil {
		t.Fatal(err)
	}
	// What prepareTurn leaves before the agent runs, then the agent's plant.
	if err := r.store.NoteTaskFolders(r.id); err != nil {
		t.Fatal(err)
	}
	st.CurrentIteration++
	st.AwaitingTurn = true
	if err := r.store.SaveState(st); err != nil {
		t.Fatal(err)
	}
	if err := plantTask(r, "deadbeef")(agent.Turn{HarnessDir: r.store.Dir(r.id)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(context.Background(), "-features 2", harness.LimitChanges{}); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if _, err := os.Lstat(r.store.Dir("deadbeef")); err == nil {
		t.Error(".grub/deadbeef is still there after the recovery")
	}
	if !strings.Contains(r.log(), "made the task folder .grub/deadbeef") {
		t.Errorf("the recovered turn's entry does not say it:\n%s", r.log())
	}
	for _, c := range r.commits.commits {
		if c.TaskID != r.id {
			t.Errorf("a commit for task %s", c.TaskID)
		}
	}
}

// init.sh, which the run runs when it starts to check a flip left in the
// feature list, is the agent's too: a task folder it makes is set aside.
func TestPlantedTaskByInitAtStartIsSetAside(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	initPath := r.store.Path(r.id, harness.FileInitScript)
	script := "#!/bin/sh\ncd \"$(dirname \"$0\")/../..\"\nmkdir -p .grub/cafebabe && echo '{}' > .grub/cafebabe/state.json\n"
	if err := os.WriteFile(initPath, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	listPath := r.store.Path(r.id, harness.FileFeatureList)
	data, err := os.ReadFile(listPath)
	if err != nil {
		t.Fatal(err)
	}
	flipped := strings.Replace(strings.Replace(string(data), `"passes": false`, `"passes": true`, 1), `"evidence": null`, `"evidence": "feature-1.done is there"`, 1)
	if flipped == string(data) {
		t.Fatalf("no flip made in:\n%s", data)
	}
	if err := os.WriteFile(listPath, []byte(flipped), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.store.Root, "feature-1.done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	two := 2
	if _, err := r.run(context.Background(), "-features 2 -default idle", harness.LimitChanges{MaxIterations: &two}); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if _, err := os.Lstat(r.store.Dir("cafebabe")); err == nil {
		t.Errorf(".grub/cafebabe is still there:\n%s", r.stderr.String())
	}
	if !strings.Contains(r.log(), "init.sh, run to check the feature list when the run started, made the task folder .grub/cafebabe") {
		t.Errorf("the log does not say it:\n%s", r.log())
	}
}

// TestConfigChangedByInitAtStartIsPutBack: the init.sh the run runs when
// it starts (to check a flip left in the feature list) is the agent's
// too: a .grub/config.toml it writes is put back and named.
func TestConfigChangedByInitAtStartIsPutBack(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	initPath := r.store.Path(r.id, harness.FileInitScript)
	script := "#!/bin/sh\ncd \"$(dirname \"$0\")/../..\"\necho 'on-turn = \"touch PWNED\"' > .grub/config.toml\n"
	if err := os.WriteFile(initPath, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	listPath := r.store.Path(r.id, harness.FileFeatureList)
	data, err := os.ReadFile(listPath)
	if err != nil {
		t.Fatal(err)
	}
	flipped := strings.Replace(strings.Replace(string(data), `"passes": false`, `"passes": true`, 1), `"evidence": null`, `"evidence": "feature-1.done is there"`, 1)
	if err := os.WriteFile(listPath, []byte(flipped), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.store.Root, "feature-1.done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	two := 2
	if _, err := r.run(context.Background(), "-features 2 -default idle", harness.LimitChanges{MaxIterations: &two}); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if _, err := os.Lstat(filepath.Join(r.store.Root, ".grub", "config.toml")); err == nil {
		t.Errorf(".grub/config.toml is still there:\n%s", r.stderr.String())
	}
	if !strings.Contains(r.log(), "illegal edit: .grub/config.toml was created by init.sh, run to check the feature list when the run started") {
		t.Errorf("the log does not say it:\n%s", r.log())
	}
}
