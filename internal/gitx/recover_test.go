package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTurnFile(t *testing.T) {
	dir := initRepo(t)
	ws := filepath.Join(dir, "sub")
	write(t, dir, map[string]string{"sub/.grub/aaaa1111/state.json": "v1", "sub/x": "x"})
	r := mustOpen(t, ws)
	if _, _, err := r.TurnFile("aaaa1111", ".grub/aaaa1111/state.json"); !errors.Is(err, ErrNoTurnFile) {
		t.Fatalf("TurnFile without commits = %v, want ErrNoTurnFile", err)
	}
	ctx := context.Background()
	if _, err := r.CommitTurn(ctx, Turn{TaskID: "aaaa1111", Iteration: 1, Summary: "one", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"sub/.grub/aaaa1111/state.json": "v2"})
	if _, err := r.CommitTurn(ctx, Turn{TaskID: "aaaa1111", Iteration: 2, Summary: "two", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"sub/.grub/bbbb2222/state.json": "other"})
	if _, err := r.CommitTurn(ctx, Turn{TaskID: "bbbb2222", Iteration: 1, Summary: "b", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ws, ".grub/aaaa1111/state.json"))
	data, e, err := r.TurnFile("aaaa1111", ".grub/aaaa1111/state.json")
	if err != nil || string(data) != "v2" || e.Iteration != 2 || len(e.Commit) != 12 {
		t.Fatalf("TurnFile = %q, %+v, %v; want v2 from turn 2", data, e, err)
	}
	if _, _, err := r.TurnFile("aaaa1111", ".grub/aaaa1111/init.sh"); !errors.Is(err, ErrNoTurnFile) {
		t.Errorf("TurnFile of a file never committed = %v, want ErrNoTurnFile", err)
	}
	if _, _, err := r.TurnFile("cccc3333", ".grub/cccc3333/state.json"); !errors.Is(err, ErrNoTurnFile) {
		t.Errorf("TurnFile of a task without commits = %v, want ErrNoTurnFile", err)
	}
}
