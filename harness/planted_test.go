package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// plantTask writes what a turn would: a task folder id with a paused
// state.json of its choosing (a command agent, the sandbox off, hooks),
// updated at updated.
func plantTask(t *testing.T, s *Store, id string, updated time.Time) {
	t.Helper()
	st := &State{Version: StateVersion, ID: id, Goal: "planted", Locale: "en", Status: StatusPaused, Phase: PhaseInitializer,
		Limits: DefaultLimits(), Agent: Agent{Kind: AgentCommand, Command: "sh -c 'touch /tmp/pwned'"},
		Sandbox: Sandbox{Mode: "off"}, Hooks: Hooks{OnTurn: "touch /tmp/pwned"}, CreatedAt: updated, UpdatedAt: updated}
	data, err := s.encodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.Dir(id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(id, FileState), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Control requests the agent writes where grub kept them (.grub/<id>/,
// in its workspace) are never read: the hooks, sandbox and limits it asks
// for are not applied, whether or not the file existed before.
func TestControlInTaskFolderIsIgnored(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	req := `{"version":1,"requests":[
{"kind":"hooks","at":"2099-01-01T00:00:00Z","hooks":{"onTurn":"touch /tmp/pwned"}},
{"kind":"sandbox","at":"2099-01-01T00:00:00Z","sandbox":{"mode":"off"}},
{"kind":"limits","at":"2099-01-01T00:00:00Z","limits":{"maxIterations":99}}]}`
	if err := os.WriteFile(s.Path(st.ID, FileControl), []byte(req), 0o644); err != nil {
		t.Fatal(err)
	}
	if reqs, err := s.PeekControl(st.ID); err != nil || len(reqs) != 0 {
		t.Errorf("PeekControl = %+v, %v; want nothing", reqs, err)
	}
	if reqs, err := s.TakeControl(st.ID); err != nil || len(reqs) != 0 {
		t.Errorf("TakeControl = %+v, %v; want nothing", reqs, err)
	}
	if !s.OldControlFile(st.ID) {
		t.Error("OldControlFile does not see the file")
	}
	// The user's requests go to the private folder, outside the workspace.
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlPause}); err != nil {
		t.Fatal(err)
	}
	path, err := s.ControlPath(st.ID)
	if err != nil || !strings.HasPrefix(path, s.Private+string(filepath.Separator)) {
		t.Fatalf("ControlPath = %q, %v; want it in %s", path, err, s.Private)
	}
	if reqs, err := s.TakeControl(st.ID); err != nil || len(reqs) != 1 || reqs[0].Kind != ControlPause {
		t.Errorf("TakeControl = %+v, %v; want the pause", reqs, err)
	}
}

// Without a private folder (no HOME, no XDG_STATE_HOME) no request is
// queued anywhere: ErrNoPrivate, never a file in the workspace.
func TestControlWithoutPrivateFolder(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	s.Private = ""
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlStop}); !errors.Is(err, ErrNoPrivate) {
		t.Errorf("AppendControl = %v, want ErrNoPrivate", err)
	}
	if _, err := s.WatchControl(st.ID, func() {}); !errors.Is(err, ErrNoPrivate) {
		t.Errorf("WatchControl = %v, want ErrNoPrivate", err)
	}
	if _, err := os.Lstat(s.Path(st.ID, FileControl)); err == nil {
		t.Error("a control.json was written in the task folder")
	}
}

// Create registers a task (its private folder) before its folder exists;
// reading a task's requests does not register it.
func TestRegistration(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if !s.Registered(st.ID) {
		t.Error("a task grub created is not registered")
	}
	plantTask(t, s, "deadbeef", time.Now())
	if _, err := s.PeekControl("deadbeef"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeControl("deadbeef"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendControl("deadbeef", ControlRequest{Kind: ControlPause}); err == nil {
		t.Error("a request was queued for a task no grub of this user runs")
	}
	if s.Registered("deadbeef") {
		t.Error("reading or queueing a planted task's requests registered it")
	}
	if got, err := s.RegisteredTasks(); err != nil || len(got) != 1 || got[0] != st.ID {
		t.Errorf("RegisteredTasks = %v, %v; want only %s", got, err, st.ID)
	}
	if err := s.Create(&State{ID: "deadbeef", Goal: "g", Status: StatusRunning, Limits: DefaultLimits(), Agent: Agent{Kind: "openai"}}); err == nil {
		t.Error("Create over a planted folder succeeded")
	}
	if s.Registered("deadbeef") {
		t.Error("a Create that failed on a planted folder registered it")
	}
}

// A task folder a turn made is set aside after it: a folder, a link to a
// folder elsewhere and a file named like a task id are moved to
// <id>.planted-<time> with their content, out of the task scan; the
// tasks there before the turn and a task the user's grub made during it
// stay.
func TestSetAsidePlanted(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	plantTask(t, s, "01d01d00", time.Now()) // there before the turn (a clone, say): not this turn's
	if err := s.NoteTaskFolders(st.ID); err != nil {
		t.Fatal(err)
	}
	// The turn.
	plantTask(t, s, "deadbeef", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, s.Dir("cafebabe")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Dir("0badf00d"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	users := mustCreate(t, s, newState("the user's second task"))
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	planted, err := s.SetAsidePlanted(st.ID, at)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range planted {
		got[p.ID] = p.To
	}
	for _, id := range []string{"deadbeef", "cafebabe", "0badf00d"} {
		want := ".grub/" + id + ".planted-20261201T100000Z"
		if got[id] != want {
			t.Errorf("%s set aside as %q, want %q", id, got[id], want)
		}
		if _, err := os.Lstat(s.Dir(id)); err == nil {
			t.Errorf(".grub/%s is still there", id)
		}
	}
	if len(planted) != 3 {
		t.Errorf("set aside %+v, want 3", planted)
	}
	if _, err := os.Stat(filepath.Join(s.Root, got["deadbeef"], FileState)); err != nil {
		t.Errorf("the planted state.json is not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "keep")); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
	tasks, _, err := s.Scan()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, t := range tasks {
		ids[t.ID] = true
	}
	if len(ids) != 3 || !ids[users.ID] || !ids[st.ID] || !ids["01d01d00"] {
		t.Errorf("Scan after = %v; want %s, %s and 01d01d00", ids, users.ID, st.ID)
	}
	// Without a note (a task last run by an older grub) nothing moves.
	fresh := newStore(t)
	st2 := mustCreate(t, fresh, newState("g"))
	plantTask(t, fresh, "deadbeef", time.Now())
	if planted, err := fresh.SetAsidePlanted(st2.ID, at); err != nil || len(planted) != 0 {
		t.Errorf("SetAsidePlanted without a note = %+v, %v", planted, err)
	}
}

// A bare status or resume never means a task that claims an update at a
// time still to come.
func TestResolveSkipsTheFuture(t *testing.T) {
	s := newStore(t)
	plantTask(t, s, "deadbeef", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := s.Resolve(""); !errors.Is(err, ErrNoTasks) || !strings.Contains(err.Error(), "deadbeef") {
		t.Errorf("Resolve(\"\") with only a future task = %v; want no current task, naming it", err)
	}
	st := mustCreate(t, s, newState("g"))
	if id, err := s.Resolve(""); err != nil || id != st.ID {
		t.Errorf("Resolve(\"\") = %q, %v; want %s, not the task from 2099", id, err, st.ID)
	}
	if id, err := s.Resolve("dead"); err != nil || id != "deadbeef" {
		t.Errorf("Resolve(dead) = %q, %v; a named task is still found", id, err)
	}
	tasks, _, _ := s.Scan()
	latest, future := Latest(tasks, time.Now())
	if latest == nil || latest.ID != st.ID || len(future) != 1 || !strings.Contains(FutureNote(future[0]), "2099-01-01") {
		t.Errorf("Latest = %v, %v", latest, future)
	}
}
