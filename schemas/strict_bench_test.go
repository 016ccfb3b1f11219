package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchList is a feature list of n features of about a real one's size,
// indented as grub writes it.
func benchList(b *testing.B, n int) []byte {
	features := make([]any, n)
	for i := range features {
		id := fmt.Sprintf("feature-%04d", i)
		features[i] = map[string]any{"id": id, "category": "functional",
			"description": "the command does " + id + ": " + strings.Repeat("one more thing well; ", 10),
			"steps":       []string{"run grub " + id, "check its output"}, "passes": false, "evidence": nil}
	}
	data, err := json.MarshalIndent(map[string]any{"version": 1, "goal": "benchmark goal", "features": features}, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecodeJSON2000 is the strict reading of a list of 2,000
// features; BenchmarkDecodePlain2000 what encoding/json alone costs.
func BenchmarkDecodeJSON2000(b *testing.B) {
	data := benchList(b, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeJSON("f.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePlain2000(b *testing.B) {
	data := benchList(b, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyScan2000 is the strict reader's own pass over the bytes.
func BenchmarkKeyScan2000(b *testing.B) {
	data := benchList(b, 2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := keyScan{data: data}
		if v := s.value(); v != nil {
			b.Fatal(v)
		}
	}
}
