package featurelist

import "testing"

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

// BenchmarkCheckTurnBytes2000 is the referee's whole check of a turn that
// flipped one feature of 2,000: each call starts from the list the call
// before returned, as the next turn does.
func BenchmarkCheckTurnBytes2000(b *testing.B) {
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
	prev, err := parseAndRemember("a.json", encA)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		next := encB
		if i%2 == 1 {
			next = encA
		}
		i++
		ch, vs, err := CheckTurnBytes("f.json", prev, next)
		if err != nil || ch.After == nil {
			b.Fatalf("CheckTurnBytes: %v %s", err, Describe(vs))
		}
		prev = ch.After
	}
}
