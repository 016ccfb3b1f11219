package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// transcriptFile is where the controller puts the transcript of turn
// iteration of a task whose folder is harnessDir.
func transcriptFile(harnessDir string, iteration int) string {
	return filepath.Join(harnessDir, "turns", fmt.Sprintf("%04d.jsonl", iteration))
}

func TestTranscriptWriteAndRead(t *testing.T) {
	dir := t.TempDir()
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC) }
	for round := range 2 { // a second open appends
		tr, err := openTranscript(transcriptFile(dir, 3), now)
		if err != nil {
			t.Fatal(err)
		}
		entries := []TranscriptEntry{
			{Type: EntryRequest, N: 1, InputTokens: 10, CachedInputTokens: 4, OutputTokens: 2, Retries: round},
			{Type: EntryToolCall, ID: "c1", Name: "shell", Arguments: `{"command":"ls"}`},
			{Type: EntryToolResult, ID: "c1", Name: "shell", Bytes: 5, Text: "a\nb\nc", SpillPath: "spill/x"},
			{Type: EntryFinal, Text: "done"},
		}
		for i, e := range entries {
			if err := tr.write(e, i == 1); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.close(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadTranscript(transcriptFile(dir, 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("%d entries, want 8", len(got))
	}
	if got[0].Time != "2025-01-02T03:04:05.0000006Z" || got[4].Retries != 1 || got[2].SpillPath != "spill/x" || got[7].Text != "done" {
		t.Errorf("entries = %+v", got)
	}
	raw, err := os.ReadFile(transcriptFile(dir, 3))
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(raw), "\n", 2)[0]
	if strings.Contains(first, `"id"`) || strings.Contains(first, `"text"`) {
		t.Errorf("a request line carries fields of other kinds: %s", first)
	}
}

func TestTranscriptWithoutHarnessDir(t *testing.T) {
	tr, err := openTranscript("", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.write(TranscriptEntry{Type: EntryFinal}, true); err != nil {
		t.Fatal(err)
	}
	if err := tr.close(); err != nil || tr.path != "" {
		t.Fatalf("close = %v, path = %q", err, tr.path)
	}
}

func TestReadTranscriptBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0001.jsonl")
	if err := os.WriteFile(path, []byte("{\"type\":\"final\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTranscript(path)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming the file and line 2", err)
	}
	if len(got) != 1 {
		t.Errorf("entries before the bad line = %d, want 1", len(got))
	}
}
