package harness

import (
	"strings"
	"testing"
	"time"
)

func TestHooksRoundTripAndOldStateLoads(t *testing.T) {
	s := newStore(t)
	st := &State{Goal: "g", Locale: "en", Status: StatusPaused, Phase: PhaseInitializer, Limits: DefaultLimits(), Agent: Agent{Kind: AgentCommand, Command: "a"}}
	if err := s.Create(st); err != nil {
		t.Fatal(err)
	}
	data, err := s.StateBytes(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "hooks") {
		t.Errorf("a task without hooks writes none, as before they existed:\n%s", data)
	}
	st.Hooks = Hooks{OnTurn: "git push origin HEAD:grub/" + st.ID, OnStop: "notify", TimeoutSeconds: 60}
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hooks != st.Hooks || got.Hooks.Timeout() != time.Minute {
		t.Errorf("hooks %+v", got.Hooks)
	}
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlHooks, Hooks: &Hooks{}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlHooks}); err == nil {
		t.Error("a hooks request without hooks was queued")
	}
	reqs, err := s.TakeControl(st.ID)
	if err != nil || len(reqs) != 1 || reqs[0].Hooks == nil {
		t.Fatalf("%v %+v", err, reqs)
	}
}

func TestHookChangeLines(t *testing.T) {
	got := HookChangeLines(Hooks{OnTurn: "a"}, Hooks{OnStop: "b", TimeoutSeconds: 90})
	want := []string{"on-turn hook a → none", "on-stop hook none → b", "hook timeout 5m → 1m30s"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if l := HookChangeLines(Hooks{TimeoutSeconds: 300}, Hooks{}); len(l) != 0 {
		t.Errorf("the default timeout written out is no change: %q", l)
	}
}
