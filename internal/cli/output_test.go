package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/grub-dev/grub/schemas"
)

func TestAgo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"}, {59 * time.Second, "just now"}, {5 * time.Minute, "5m ago"},
		{3 * time.Hour, "3h ago"}, {47 * time.Hour, "47h ago"}, {96 * time.Hour, "4d ago"},
		{-time.Hour, "just now"},
	}
	for _, tt := range tests {
		if got := ago(now, now.Add(-tt.d)); got != tt.want {
			t.Errorf("ago(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"a\n  b\tc", 0, "a b c"},
		{"abcdef", 4, "abc…"},
		{"abcd", 4, "abcd"},
		{"日本語のゴール", 4, "日本語…"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.s, tt.max); got != tt.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}

func TestFieldWriterIndentsContinuationLines(t *testing.T) {
	var b bytes.Buffer
	fw := &fieldWriter{w: &b, width: 4}
	fw.field("goal", "first\nsecond\n")
	fw.field("id", "x")
	want := "goal  first\n      second\nid    x\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestWriteJSONRefusesOutputThatBreaksItsSchema checks that a document
// that does not match its schema is not printed and is an internal error
// (exit 1), not a bad-input error.
func TestWriteJSONRefusesOutputThatBreaksItsSchema(t *testing.T) {
	var b bytes.Buffer
	err := writeJSON(&b, schemas.ListOutput, map[string]any{"tasks": []any{map[string]any{"id": "x"}}})
	if err == nil {
		t.Fatal("no error for an invalid document")
	}
	if b.Len() != 0 {
		t.Errorf("printed %q", b.String())
	}
	if code := ExitCode(err); code != ExitFailed {
		t.Errorf("exit code %d, want 1", code)
	}

	b.Reset()
	if err := writeJSON(&b, schemas.ListOutput, listOutput{Tasks: []listTask{}}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\n  \"tasks\": []\n}\n" {
		t.Errorf("printed %q", b.String())
	}
}
