package featurelist

import (
	"fmt"
	"testing"
)

// BenchmarkParse2000 is the full parse of a list of 2,000 features: what
// a turn pays when its edit is not one feature's, and what grub status
// pays.
func BenchmarkParse2000(b *testing.B) {
	data, err := Encode(bigList(2000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("f.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckTurn is the feature list's part of a turn that flipped
// one feature, at 10 and 2,000 features: the save of state encoding the
// accepted list (the store's Encoder, which encodes only the feature the
// last turn changed), then the referee's check: the accepted list's bytes
// from the same encoder (harness.Store.ListBytes, which finds them
// unchanged) and CheckTurnBytes. Each turn starts from the list the one
// before returned and flips a feature back or forth.
func BenchmarkCheckTurn(b *testing.B) {
	for _, n := range []int{10, 2000} {
		b.Run(fmt.Sprintf("features=%d", n), func(b *testing.B) {
			a := bigList(n)
			encA, err := Encode(a)
			if err != nil {
				b.Fatal(err)
			}
			flipped := a.Clone()
			flipped.Features[n/2].Passes, flipped.Features[n/2].Evidence = true, ev("go test ./... passed")
			encB, err := Encode(&flipped)
			if err != nil {
				b.Fatal(err)
			}
			var enc Encoder
			prev := a
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				next := encB
				if i%2 == 1 {
					next = encA
				}
				i++
				if _, err := enc.Marshal(prev); err != nil { // the save of state
					b.Fatal(err)
				}
				old, err := enc.Marshal(prev) // the referee's ListBytes
				if err != nil {
					b.Fatal(err)
				}
				ch, vs, err := CheckTurnBytes("f.json", prev, old, next)
				if err != nil || ch.After == nil {
					b.Fatalf("CheckTurnBytes: %v %s", err, Describe(vs))
				}
				prev = ch.After
			}
		})
	}
}
