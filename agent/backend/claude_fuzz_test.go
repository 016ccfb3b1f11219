package backend

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseClaudeResult feeds arbitrary output to the claude result parser:
// it must never panic, and a result it accepts is a "result" object with
// non-negative usage, requests and cost.
func FuzzParseClaudeResult(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "claude", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no claude samples: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, seed := range []string{
		"", "{", "[]", "null", `"result"`, "[{\"type\":\"result\"}]",
		"noise\n{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"ok\"}\n",
		`{"type":"result","usage":{"input_tokens":-1}}`,
		`{"type":"result","num_turns":-3}`,
		`{"type":"result","errors":["a",1]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		r, err := parseClaudeResult(out)
		if err != nil {
			return
		}
		if r.Type != "result" {
			t.Fatalf("accepted a %q message from %q", r.Type, out)
		}
		u := r.usage()
		if u.InputTokens < 0 || u.CachedInputTokens < 0 || u.OutputTokens < 0 || u.Requests < 0 || u.CostUSD < 0 {
			t.Fatalf("bad usage %+v from %q", u, out)
		}
		if u.CachedInputTokens > u.InputTokens {
			t.Fatalf("cached %d > input %d from %q", u.CachedInputTokens, u.InputTokens, out)
		}
		_ = r.problem()
	})
}

// FuzzParseClaudeStream feeds arbitrary output to the stream-json reader,
// whole and cut in two at an arbitrary point: it must never panic, never
// report negative usage, requests or cost, and give the same outcome
// however the output arrives.
func FuzzParseClaudeStream(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "claude", "*.json*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no claude samples: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint(len(b)/2))
	}
	for _, seed := range []string{
		"", "\n", `{"type":"assistant"}`, `{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}`,
		`{"type":"assistant","message":{"id":"m","usage":{"output_tokens":-1}}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":{"x":1}}]}}`,
		`{"type":"system","subtype":"api_retry","error":{"message":"x"},"error_status":"529"}`,
		`{"type":"result","subtype":"success","total_cost_usd":-0.5}`,
	} {
		f.Add([]byte(seed), uint(1))
	}
	f.Fuzz(func(t *testing.T, out []byte, cut uint) {
		whole := parseClaudeStream(out)
		u := whole.Usage
		if u.InputTokens < 0 || u.CachedInputTokens < 0 || u.OutputTokens < 0 || u.Requests < 0 || u.CostUSD < 0 {
			t.Fatalf("bad usage %+v from %q", u, out)
		}
		if u.CachedInputTokens > u.InputTokens {
			t.Fatalf("cached %d > input %d from %q", u.CachedInputTokens, u.InputTokens, out)
		}
		i := int(cut % uint(len(out)+1))
		s := newClaudeStream(&transcript{}, "", nil, newStallWatch(0, nil))
		_, _ = s.Write(out[:i])
		_, _ = s.Write(out[i:])
		split := s.finish()
		if split.Usage != whole.Usage || errText(split.Err) != errText(whole.Err) || split.Result.Result != whole.Result.Result {
			t.Fatalf("cut at %d: outcome %+v, whole %+v, from %q", i, split, whole, out)
		}
	})
}
