package featurelist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// Differential: Encoder (with Prime from json-decoded bytes, caller-side
// in-place mutations) against Marshal; parseEdit against Parse on random
// byte edits of Encode's output.
func TestEncoderDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"x", "", "\ufffd", "a\u2028b", "<&>", "é", "line\nbreak", "\"q\"", "Bad Id", "ok-id"}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	var e Encoder
	l := sample(12)
	for step := range 20000 {
		switch rng.IntN(10) {
		case 0: // prime from the bytes of the current list as grub would reload them
			if data, err := Marshal(l); err == nil {
				var d List
				if json.Unmarshal(data, &d) == nil {
					e.Prime(&d, data)
					l = &d
				}
			}
		case 1:
			l.Features[rng.IntN(len(l.Features))].Steps = nil
		case 2: // in-place mutation of shared arrays
			f := &l.Features[rng.IntN(len(l.Features))]
			if len(f.Steps) > 0 {
				f.Steps[0] = pick()
			}
			if f.Evidence != nil {
				*f.Evidence = pick()
			}
		default:
			next := l.Clone()
			f := &next.Features[rng.IntN(len(next.Features))]
			switch rng.IntN(7) {
			case 0:
				f.ID = pick()
			case 1:
				f.Description = pick()
			case 2:
				f.Steps = append(f.Steps, pick())
			case 3:
				s := pick()
				f.Evidence = &s
			case 4:
				f.Evidence = nil
			case 5:
				f.Passes = !f.Passes
			case 6:
				f.Verify = pick()
			}
			l = &next
		}
		got, gerr := e.Marshal(l)
		want, werr := Marshal(l)
		if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("step %d: encoder %v\n%s\nmarshal %v\n%s", step, gerr, got, werr, want)
		}
		if werr != nil { // back to a valid list
			l = sample(12)
		}
	}
}

func TestParseEditDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	before := sample(30)
	data, _ := Encode(before)
	for step := range 20000 {
		mut := bytes.Clone(data)
		switch rng.IntN(3) {
		case 0:
			i := rng.IntN(len(mut))
			mut[i] = "tf\"{}[],: a0\\\n"[rng.IntN(14)]
		case 1:
			i := rng.IntN(len(mut))
			mut = append(mut[:i:i], append([]byte(fmt.Sprintf("%c", "xtrue\"{}, "[rng.IntN(10)])), data[i:]...)...)
		case 2:
			i, j := rng.IntN(len(mut)), rng.IntN(len(mut))
			if i > j {
				i, j = j, i
			}
			mut = append(mut[:i:i], data[j:]...)
		}
		got, gok := parseEdit(before, data, mut)
		want, werr := Parse(FileName, mut)
		if gok && (werr != nil || !reflect.DeepEqual(got, want) && !Equal(got, want)) {
			t.Fatalf("step %d: parseEdit %+v, Parse %v %+v\n%s", step, got, werr, want, mut)
		}
	}
}

// Prime takes data as Marshal's bytes for l, but a list holding a string
// that is not UTF-8 is written with "\ufffd" escapes, and read back holds
// a real U+FFFD, which Marshal writes raw: Marshal(read back) != data.
func TestPrimeRefusesNonUTF8Bytes(t *testing.T) {
	l := sample(3)
	l.Goal = "goal \xff"
	data, err := Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var d List
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var e Encoder
	e.Prime(&d, data)
	got, _ := e.Marshal(&d)
	want, _ := Marshal(&d)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encoder.Marshal after Prime:\n%s\nMarshal:\n%s", got, want)
	}
}
