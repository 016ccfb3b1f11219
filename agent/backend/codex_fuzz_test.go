package backend

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseCodexEvents feeds arbitrary output to the codex event parser,
// whole and cut in two at an arbitrary point: it must never panic, never
// report negative usage or fewer than one request, and give the same
// outcome however the output arrives.
func FuzzParseCodexEvents(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "codex", "*.jsonl"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no codex samples: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint(len(b)/2))
	}
	for _, seed := range []string{
		"", "\n\n", "{", "null\n", `{"type":1}`, `{"type":"turn.failed","error":null}`,
		`{"type":"turn.completed","usage":{"input_tokens":-1}}`,
		`{"type":"item.completed","item":{"type":"agent_message","text":"a"}}` + "\r\n",
		`{"type":"error","message":""}` + "\n" + `{"type":"turn.failed","error":{"message":" "}}`,
	} {
		f.Add([]byte(seed), uint(1))
	}
	f.Fuzz(func(t *testing.T, out []byte, cut uint) {
		whole := parseCodexEvents(out)
		u := whole.Usage
		if u.InputTokens < 0 || u.CachedInputTokens < 0 || u.OutputTokens < 0 || u.Requests != 0 || u.CostReported {
			t.Fatalf("bad usage %+v from %q", u, out)
		}
		i := int(cut % uint(len(out)+1))
		p := newCodexEvents(&transcript{}, "", nil, newStallWatch(0, nil))
		_, _ = p.Write(out[:i])
		_, _ = p.Write(out[i:])
		split := p.outcome()
		if split.Final != whole.Final || split.Usage != whole.Usage || split.Completed != whole.Completed ||
			split.Failure != whole.Failure || errText(split.Malformed) != errText(whole.Malformed) {
			t.Fatalf("cut at %d: outcome %+v, whole %+v, from %q", i, split, whole, out)
		}
	})
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
