package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
)

const docID = "0a1b2c3d"

// doctorEnv is a workspace in a git repository with a task in its
// execution phase that ran `turns` turns, each logged and committed as the
// controller does.
func doctorEnv(t *testing.T, turns int) (*testEnv, *gitx.Repo) {
	t.Helper()
	e := newTestEnv(t)
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "T"}, {"config", "user.email", "t@example.com"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v %s", args, err, out)
		}
	}
	repo, err := gitx.Open(e.root)
	if err != nil {
		t.Fatal(err)
	}
	list := &featurelist.List{Version: 1, Goal: "add OAuth login to the API",
		Features: []featurelist.Feature{feature("login-form", true), feature("oauth-callback", false)}}
	st := e.task(docID, time.Hour, func(st *harness.State) { st.FeatureListBaseline = list })
	if err := e.store.SaveFeatureList(docID, list); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= turns; i++ {
		st.CurrentIteration = i
		if err := e.store.SaveState(st); err != nil {
			t.Fatal(err)
		}
		e.logTurn(i)
		if _, err := repo.CommitTurn(context.Background(), gitx.Turn{TaskID: docID, Iteration: i, Summary: "turn", Status: "running"}); err != nil {
			t.Fatal(err)
		}
	}
	return e, repo
}

func (e *testEnv) logTurn(n int) {
	e.t.Helper()
	if err := e.store.AppendEntry(docID, templates.Entry{Iteration: n, Phase: "execution", Decision: loopstate.Continue, Summary: "did a thing", At: e.now}); err != nil {
		e.t.Fatal(err)
	}
}

// doctor runs grub doctor --json with args and decodes its output.
func (e *testEnv) doctor(args ...string) (int, doctorOutput, string) {
	e.t.Helper()
	code, out, stderr := e.run(append([]string{"doctor", "--json"}, args...)...)
	if err := schemas.Validate(schemas.DoctorOutput, "stdout", []byte(out)); err != nil {
		e.t.Fatalf("doctor %v: %v\n%s\n%s", args, err, out, stderr)
	}
	var o doctorOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		e.t.Fatal(err)
	}
	return code, o, stderr
}

// problems lists the task's findings that are problems, as check: message.
func problems(o doctorOutput) string {
	var b strings.Builder
	for _, rep := range o.Tasks {
		for _, f := range rep.Findings {
			if f.Severity != findingOK {
				b.WriteString(f.Severity + " " + f.Check + ": " + f.Message + "\n")
			}
		}
	}
	return b.String()
}

func TestDoctorHealthy(t *testing.T) {
	e, _ := doctorEnv(t, 2)
	code, o, _ := e.doctor()
	if code != 0 || !o.Healthy || len(o.Tasks) != 1 || problems(o) != "" {
		t.Fatalf("doctor = %d %+v\n%s", code, o, problems(o))
	}
	code, out, _ := e.run("doctor", docID)
	if code != 0 || !strings.Contains(out, "task 0a1b2c3d (.grub/0a1b2c3d): healthy") || !strings.Contains(out, "one commit for each of the 2 turns done") {
		t.Errorf("doctor text = %d\n%s", code, out)
	}
}

func TestDoctorCorruptStateRepairedFromGit(t *testing.T) {
	e, _ := doctorEnv(t, 2)
	os.WriteFile(e.store.Path(docID, harness.FileState), []byte(`{"torn`), 0o644)
	code, o, _ := e.doctor(docID)
	if code != 1 || o.Healthy || !strings.Contains(problems(o), "problem state: .grub/0a1b2c3d/state.json: not valid JSON") {
		t.Fatalf("doctor = %d\n%s", code, problems(o))
	}
	code, o, stderr := e.doctor(docID, "--repair")
	if code != 0 || !o.Healthy {
		t.Fatalf("doctor --repair = %d\n%s\n%s", code, problems(o), stderr)
	}
	if !strings.Contains(stderr, "set the damaged state.json aside as .grub/0a1b2c3d/state.json.damaged-") ||
		!strings.Contains(stderr, "rebuilt state.json from the copy in commit") {
		t.Errorf("repair steps not said:\n%s", stderr)
	}
	if st := e.state(docID); st.CurrentIteration != 2 || st.Goal != "add OAuth login to the API" {
		t.Errorf("rebuilt state: iteration %d, goal %q", st.CurrentIteration, st.Goal)
	}
}

func TestDoctorMissingStateRebuiltFromFiles(t *testing.T) {
	e := newTestEnv(t) // no git: the feature list, the log and the ledger are all there is
	list := &featurelist.List{Version: 1, Goal: "add OAuth login to the API", Features: []featurelist.Feature{feature("login-form", true)}}
	e.task(docID, time.Hour, nil)
	e.store.SaveFeatureList(docID, list)
	e.logTurn(1)
	e.logTurn(2)
	ledgerTurn(t, e, 1) // a line per turn, as the controller writes them
	verifiedFlip(t, e, 2, "login-form")
	os.Remove(e.store.Path(docID, harness.FileState))
	code, o, _ := e.doctor()
	if code != 1 || !strings.Contains(problems(o), "problem files: .grub/0a1b2c3d/state.json is missing") {
		t.Fatalf("doctor = %d\n%s", code, problems(o))
	}
	code, o, stderr := e.doctor("--repair")
	if code != 0 || !o.Healthy || !strings.Contains(stderr, "rebuilt state.json from feature-list.json (1 features, 1 passing") {
		t.Fatalf("doctor --repair = %d\n%s\n%s", code, problems(o), stderr)
	}
	st := e.state(docID)
	if st.CurrentIteration != 2 || st.Phase != harness.PhaseExecution || st.Status != harness.StatusPaused || st.FeatureListBaseline.Passing() != 1 {
		t.Errorf("rebuilt state %+v", st)
	}
	if code, out, _ := e.run("list"); code != 0 || !strings.Contains(out, docID+"  paused") {
		t.Errorf("list after the repair = %d\n%s", code, out)
	}
}

// ledgerTurn appends the ledger line of turn n, which flipped nothing.
func ledgerTurn(t *testing.T, e *testEnv, n int) {
	t.Helper()
	err := e.store.AppendTurn(docID, harness.TurnRecord{Iteration: n, Phase: harness.PhaseExecution,
		Decision: loopstate.Continue, Summary: "did a thing", Status: harness.StatusRunning, Time: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
}

// verifiedFlip appends the ledger line of turn n saying grub verified the
// flip of feature id.
func verifiedFlip(t *testing.T, e *testEnv, n int, id string) {
	t.Helper()
	err := e.store.AppendTurn(docID, harness.TurnRecord{Iteration: n, Phase: harness.PhaseExecution, Feature: id, Flipped: id,
		Decision: loopstate.Continue, Summary: "built " + id, Status: harness.StatusRunning, Time: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDoctorResetsUnverifiedFlips: rebuilding state.json from
// feature-list.json, a passing feature that no ledger line says grub
// verified is reset to pending, with a note; a verified one is kept.
func TestDoctorResetsUnverifiedFlips(t *testing.T) {
	e := newTestEnv(t)
	list := &featurelist.List{Version: 1, Goal: "add OAuth login to the API",
		Features: []featurelist.Feature{feature("login-form", true), feature("logout", true), feature("tokens", false)}}
	e.task(docID, time.Hour, nil)
	e.store.SaveFeatureList(docID, list)
	e.logTurn(1)
	e.logTurn(2)
	e.logTurn(3)
	ledgerTurn(t, e, 1)
	verifiedFlip(t, e, 2, "login-form")
	ledgerTurn(t, e, 3)
	os.Remove(e.store.Path(docID, harness.FileState))
	code, o, stderr := e.doctor("--repair")
	if code != 0 || !o.Healthy || !strings.Contains(stderr, "feature-list.json marks logout passing, but no turn's line in turns.jsonl nor grub's record in a turn commit says grub verified it: reset to pending") {
		t.Fatalf("doctor --repair = %d\n%s\n%s", code, problems(o), stderr)
	}
	st := e.state(docID)
	if b := st.FeatureListBaseline; b.Passing() != 1 || !b.Features[0].Passes || b.Features[1].Passes || b.Features[1].Evidence != nil {
		t.Errorf("rebuilt accepted list %+v, want login-form alone passing", b.Features)
	}
	onDisk, _, err := e.store.LoadFeatureList(docID)
	if err != nil || !featurelist.Equal(onDisk, st.FeatureListBaseline) {
		t.Errorf("feature-list.json is not the rebuilt accepted list (%v): %+v", err, onDisk)
	}
}

func TestDoctorStaleLock(t *testing.T) {
	e, _ := doctorEnv(t, 1)
	rec := `{"pid":999999,"host":"elsewhere","startedAt":"2026-03-01T11:00:00Z","role":"runner","agentPgid":4242}`
	os.WriteFile(e.store.Path(docID, harness.FileLock), []byte(rec), 0o644)
	code, o, _ := e.doctor()
	if code != 1 || !strings.Contains(problems(o), "problem lock: stale: no runner holds the lock, but runner pid 999999 on elsewhere died leaving agent process group 4242") {
		t.Fatalf("doctor = %d\n%s", code, problems(o))
	}
	// Held by a runner: reported, and --repair refuses (exit 75).
	os.Remove(e.store.Path(docID, harness.FileLock))
	e.lock(docID)
	code, o, _ = e.doctor()
	if code != 0 || !strings.Contains(o.Tasks[0].Findings[4].Message, "held by a runner") {
		t.Fatalf("doctor with a runner = %d %+v", code, o.Tasks[0].Findings)
	}
	code, out, stderr := e.run("doctor", "--repair", "--json")
	if code != ExitLocked || !strings.Contains(stderr, "already running") || !strings.Contains(out, `"exitCode": 75`) {
		t.Errorf("doctor --repair with a runner = %d\n%s\n%s", code, out, stderr)
	}
}

func TestDoctorLogStateMismatch(t *testing.T) {
	e, repo := doctorEnv(t, 2)
	st := e.state(docID)
	st.CurrentIteration = 3
	e.store.SaveState(st)
	repo.CommitTurn(context.Background(), gitx.Turn{TaskID: docID, Iteration: 3, Summary: "turn", Status: "running"})
	code, o, _ := e.doctor()
	if code != 1 || !strings.Contains(problems(o), "problem log: state.json counts 3 turns done but the progress log has no entry for turn(s) [3]") {
		t.Fatalf("doctor = %d\n%s", code, problems(o))
	}
	code, o, stderr := e.doctor("--repair")
	if code != 0 || !strings.Contains(stderr, "appended an entry with outcome unknown to progress-log.md for turn(s) [3]") {
		t.Fatalf("doctor --repair = %d\n%s\n%s", code, problems(o), stderr)
	}
	// A turn logged twice is a warning, not a problem.
	e.logTurn(3)
	if code, o, _ := e.doctor(); code != 0 || !strings.Contains(problems(o), "warning log: turn(s) [3] are logged more than once") {
		t.Errorf("doctor with a turn logged twice = %d\n%s", code, problems(o))
	}
}

func TestDoctorMissingCommit(t *testing.T) {
	e, repo := doctorEnv(t, 2)
	st := e.state(docID)
	st.CurrentIteration = 3
	e.store.SaveState(st)
	e.logTurn(3)
	code, o, _ := e.doctor()
	if code != 1 || !strings.Contains(problems(o), "problem git: turn 3, the last one done, has no commit") {
		t.Fatalf("doctor = %d\n%s", code, problems(o))
	}
	code, o, stderr := e.doctor("--repair")
	if code != 0 || !o.Healthy || !strings.Contains(stderr, "committed the workspace as turn 3's recovery commit") {
		t.Fatalf("doctor --repair = %d\n%s\n%s", code, problems(o), stderr)
	}
	hist, err := repo.History(docID)
	if err != nil || len(hist) != 3 || hist[2].Iteration != 3 || !strings.Contains(hist[2].Summary, "recovery commit by grub doctor") {
		t.Errorf("history after the repair = %+v, %v", hist, err)
	}
	// Nothing left to repair: said, and nothing committed.
	if code, _, stderr := e.run("doctor", "--repair"); code != 0 || !strings.Contains(stderr, "nothing to repair") {
		t.Errorf("second repair = %d %s", code, stderr)
	}
	if hist, _ := repo.History(docID); len(hist) != 3 {
		t.Errorf("%d commits after a repair with nothing to do, want 3", len(hist))
	}
}

func TestDoctorRestoresLostFilesFromGit(t *testing.T) {
	e, _ := doctorEnv(t, 1)
	init := e.store.Path(docID, harness.FileInitScript)
	want, _ := os.ReadFile(init)
	os.Remove(init)
	os.Remove(e.store.Path(docID, harness.FileChecklist))
	os.Mkdir(e.store.Path(docID, harness.FileChecklist), 0o755) // a folder in its place
	os.WriteFile(e.store.Path(docID, harness.FileFeatureList), []byte("{"), 0o644)
	code, o, _ := e.doctor()
	if code != 1 || !strings.Contains(problems(o), "init.sh is missing") || !strings.Contains(problems(o), "feature-checklist.md is a folder") ||
		!strings.Contains(problems(o), "problem feature-list") {
		t.Fatalf("doctor = %d\n%s", code, problems(o))
	}
	code, o, stderr := e.doctor("--repair")
	if code != 0 || !o.Healthy {
		t.Fatalf("doctor --repair = %d\n%s\n%s", code, problems(o), stderr)
	}
	if got, _ := os.ReadFile(init); string(got) != string(want) {
		t.Error("init.sh not restored from the commit")
	}
	if fi, err := os.Stat(init); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("restored init.sh is not executable: %v", err)
	}
	for _, w := range []string{"restored init.sh from commit", "rendered feature-checklist.md again", "restored feature-list.json from the list grub last accepted"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	aside, _ := filepath.Glob(e.store.Path(docID, "*.damaged-*"))
	if len(aside) != 2 {
		t.Errorf("set aside: %v, want the checklist folder and the broken list", aside)
	}
}

func TestDoctorErrorsAsJSON(t *testing.T) {
	e := newTestEnv(t)
	e.task(docID, time.Hour, nil)
	code, out, _ := e.run("doctor", "ffffffff", "--json")
	if code != ExitUsage || schemas.Validate(schemas.ErrorOutput, "stdout", []byte(out)) != nil || !strings.Contains(out, `"exitCode": 2`) {
		t.Errorf("doctor of an unknown id = %d\n%s", code, out)
	}
	code, out, _ = e.run("status", "ffffffff", "--json")
	if code != ExitUsage || schemas.Validate(schemas.ErrorOutput, "stdout", []byte(out)) != nil || !strings.Contains(out, `no grub task \"ffffffff\"`) {
		t.Errorf("status --json of an unknown id = %d\n%s", code, out)
	}
	// --exit-status's silent exit code is not an error: the status is printed.
	code, out, _ = e.run("status", "--json", "--exit-status")
	if code != ExitPaused || strings.Contains(out, `"error"`) {
		t.Errorf("status --json --exit-status = %d\n%s", code, out)
	}
}

// TestDoctorReportsGitPrograms: hooks and program-running config keys in
// the repository are reported (a warning: the task stays healthy; grub
// never runs them, the user's git does).
func TestDoctorReportsGitPrograms(t *testing.T) {
	e, _ := doctorEnv(t, 1)
	if code, o, _ := e.doctor(); code != 0 || strings.Contains(problems(o), "git-programs") {
		t.Fatalf("a fresh repository: doctor = %d\n%s", code, problems(o))
	}
	cmd := exec.Command("git", "config", "core.fsmonitor", "touch PLANTED")
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(e.root, ".git", "hooks", "post-checkout"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, o, _ := e.doctor()
	p := problems(o)
	if code != 0 || !o.Healthy || !strings.Contains(p, "warning git-programs: your git runs these (grub never does)") ||
		!strings.Contains(p, "hook .git/hooks/post-checkout") || !strings.Contains(p, `core.fsmonitor = "touch PLANTED"`) {
		t.Fatalf("doctor = %d healthy %v\n%s", code, o.Healthy, p)
	}
}

// TestDoctorAcceptedList checks accepted-list.json: lost while
// feature-list.json holds the list, it is a problem --repair writes again;
// lost while feature-list.json was changed, the task cannot load, and
// --repair restores feature-list.json from the last turn commit.
func TestDoctorAcceptedList(t *testing.T) {
	e, _ := doctorEnv(t, 2)
	accepted := e.store.Path(docID, harness.FileAcceptedList)
	want, err := os.ReadFile(accepted)
	if err != nil {
		t.Fatalf("no accepted-list.json after a save: %v", err)
	}
	os.Remove(accepted)
	code, o, _ := e.doctor(docID)
	if code != 1 || !strings.Contains(problems(o), "problem accepted-list: .grub/0a1b2c3d/accepted-list.json and the changes after it are missing or do not make the list state.json names") {
		t.Fatalf("doctor without accepted-list.json = %d\n%s", code, problems(o))
	}
	code, o, stderr := e.doctor(docID, "--repair")
	if got, _ := os.ReadFile(accepted); code != 0 || !o.Healthy || string(got) != string(want) || !strings.Contains(stderr, "wrote accepted-list.json again") {
		t.Fatalf("doctor --repair = %d\n%s\n%s\nfile:\n%s", code, problems(o), stderr, got)
	}

	os.Remove(accepted)
	os.WriteFile(e.store.Path(docID, harness.FileFeatureList), []byte(`{"torn`), 0o644)
	code, o, _ = e.doctor(docID)
	if code != 1 || !strings.Contains(problems(o), "problem accepted-list: .grub/0a1b2c3d/accepted-list.json is missing or is not the accepted feature list") {
		t.Fatalf("doctor with both lost = %d\n%s", code, problems(o))
	}
	code, o, stderr = e.doctor(docID, "--repair")
	if got, _ := os.ReadFile(accepted); code != 0 || !o.Healthy || string(got) != string(want) || !strings.Contains(stderr, "restored feature-list.json from commit") {
		t.Fatalf("doctor --repair with both lost = %d\n%s\n%s\nfile:\n%s", code, problems(o), stderr, got)
	}
	if st := e.state(docID); st.CurrentIteration != 2 || st.FeatureListBaseline.Passing() != 1 {
		t.Errorf("state after the repair: iteration %d, %d passing", st.CurrentIteration, st.FeatureListBaseline.Passing())
	}
}
