package featurelist

import (
	"fmt"
	"strings"
	"testing"
)

// bigList is a planned list of n features of about the size of a real
// one: a few hundred bytes of description and steps each.
func bigList(n int) *List {
	l := &List{Version: 1, Goal: "benchmark goal"}
	for i := range n {
		id := fmt.Sprintf("feature-%04d", i)
		l.Features = append(l.Features, Feature{
			ID:          id,
			Category:    "functional",
			Description: "the command does " + id + ": " + strings.Repeat("one more thing well; ", 10),
			Steps:       []string{"run grub " + id, "check its output"},
		})
	}
	return l
}

// BenchmarkCommonPrefix2000 and BenchmarkCommonSuffix2000 compare the
// feature list of 2,000 features before and after a turn that changed one
// feature in its middle.
func BenchmarkCommonPrefix2000(b *testing.B) {
	old, data := flipBytes(b, 2000, 1000)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		commonPrefix(old, data)
	}
}

func BenchmarkCommonSuffix2000(b *testing.B) {
	old, data := flipBytes(b, 2000, 1000)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		commonSuffix(old, data)
	}
}

func flipBytes(b *testing.B, n, k int) (old, data []byte) {
	l := bigList(n)
	old, err := Encode(l)
	if err != nil {
		b.Fatal(err)
	}
	l.Features[k].Passes, l.Features[k].Evidence = true, ev("go test ./... passed")
	data, err = Encode(l)
	if err != nil {
		b.Fatal(err)
	}
	return old, data
}

// BenchmarkParseEdit2000 is the fast path alone on a turn's list of 2,000
// features that flipped one feature: each call starts from the list the
// call before returned, with its bytes, as the next turn does.
func BenchmarkParseEdit2000(b *testing.B) {
	a := bigList(2000)
	encA, err := Encode(a)
	if err != nil {
		b.Fatal(err)
	}
	flipped := a.Clone()
	flipped.Features[1000].Passes, flipped.Features[1000].Evidence = true, ev("go test ./... passed")
	encB, err := Encode(&flipped)
	if err != nil {
		b.Fatal(err)
	}
	prev := a
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		old, next := encA, encB
		if i%2 == 1 {
			old, next = encB, encA
		}
		i++
		l, ok := parseEdit(prev, old, next)
		if !ok {
			b.Fatal("the flip was not parsed as an edit")
		}
		prev = l
	}
}
