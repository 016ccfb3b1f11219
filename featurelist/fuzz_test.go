package featurelist

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

var fuzzSeeds = []string{
	``,
	`{}`,
	`[]`,
	`null`,
	`{"version":1,"goal":"g","features":[]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":true,"evidence":"ok"},{"id":"b","category":"c","description":"d","steps":[],"verify":"true","passes":false,"evidence":""}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":true,"evidence":"ok"},{"id":"a","category":"c","description":"d","steps":["s"],"passes":true,"evidence":"ok"}]}`,
	`{"version":1.0,"goal":"g","features":[]}`,
	`{"version":1,"goal":"<goal>","features":[{"id":"x","category":"\u00ff","description":"…","steps":["<div>"],"passes":false,"evidence":null,"extra":[1e400]}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":false,"evidence":null}]`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":false,"evidence":null}]}]`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":false,"passes":true,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"PASSES":true,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s"],"passes":false,"Evidence":"forged","evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"\ud800","steps":["s"],"passes":false,"evidence":"\ud83d\ude00"}]}`,
	"{\"version\":1,\"goal\":\"g\xff\",\"features\":[]}",
}

// FuzzParse checks that Parse never panics, reports bad documents as
// *schemas.Error, and that any list it accepts round-trips through Marshal
// and passes CheckTurn against itself.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse("f.json", data)
		ref, ok := refRead(data)
		if (err == nil) != ok {
			t.Fatalf("Parse error %v, the strict reference accepts %v", err, ok)
		}
		if err != nil {
			var se *schemas.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error is not a *schemas.Error: %v", err)
			}
			return
		}
		if !Equal(l, ref) {
			t.Fatalf("Parse and the strict reference read different lists:\n%+v\n%+v", l, ref)
		}
		if ch, vs := CheckTurn(l, l); len(vs) != 0 || len(ch.Flipped) != 0 || len(ch.Regressed) != 0 {
			t.Fatalf("CheckTurn(l, l) = %+v, %s", ch, Describe(vs))
		}
		if _, vs := CheckTurn(l, clone(l)); len(vs) != 0 {
			t.Fatalf("CheckTurn(l, clone(l)) = %s", Describe(vs))
		}
		_ = CheckInitial(l, l.Goal, 0, len(l.Features))
		out, err := Marshal(l)
		if err != nil {
			t.Fatalf("Marshal of a parsed list: %v", err)
		}
		back, err := Parse("f.json", out)
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v\n%s", err, out)
		}
		again, err := Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("Marshal not stable:\n%s\n---\n%s", out, again)
		}
		if _, vs, err := CheckTurnBytes("f.json", l, out, out); err != nil || len(vs) != 0 {
			t.Fatalf("CheckTurnBytes(l, Marshal(l)) = %s, %v", Describe(vs), err)
		}
	})
}

// FuzzCheckTurnBytes checks that CheckTurnBytes never panics or errors for a
// valid before list, that given the before list's bytes (the one-feature
// fast path) it answers exactly as without them (the full parse), and
// that an edit it accepts obeys the turn rules.
func FuzzCheckTurnBytes(f *testing.F) {
	for _, b := range fuzzSeeds {
		for _, a := range fuzzSeeds {
			f.Add([]byte(b), []byte(a))
		}
	}
	_, old, seeds := editSeeds(f)
	for _, s := range seeds {
		f.Add(old, s)
	}
	f.Fuzz(func(t *testing.T, beforeData, afterData []byte) {
		before, err := Parse("before.json", beforeData)
		if err != nil {
			before = base()
		}
		accepted, err := Marshal(before)
		if err != nil {
			t.Fatalf("Marshal of a parsed list: %v", err)
		}
		ch, vs, err := CheckTurnBytes("after.json", before, accepted, afterData)
		if err != nil {
			t.Fatalf("CheckTurnBytes error: %v", err)
		}
		fullCh, fullVs, err := CheckTurnBytes("after.json", before, nil, afterData)
		if err != nil {
			t.Fatalf("CheckTurnBytes error: %v", err)
		}
		if !sameVerdict(ch, vs, fullCh, fullVs) {
			t.Fatalf("with the before list's bytes: %q %+v; without: %q %+v", Describe(vs), ch, Describe(fullVs), fullCh)
		}
		for _, v := range vs {
			if strings.TrimSpace(v.Message) == "" {
				t.Fatalf("violation with an empty message: %+v", v)
			}
		}
		if (Describe(vs) == "") != (len(vs) == 0) {
			t.Fatalf("Describe(%d violations) = %q", len(vs), Describe(vs))
		}
		if len(vs) != 0 {
			return
		}
		after, err := Parse("after.json", afterData)
		if err != nil {
			t.Fatalf("accepted an after list that does not parse: %v", err)
		}
		if ref, ok := refRead(afterData); !ok || !Equal(ref, after) || !Equal(ch.After, ref) {
			t.Fatalf("accepted an after list the strict reference refuses or reads differently (%v)", ok)
		}
		if after.Version != before.Version || after.Goal != before.Goal || len(after.Features) != len(before.Features) {
			t.Fatalf("accepted a change to version, goal or feature count")
		}
		if len(ch.Flipped) > 1 {
			t.Fatalf("accepted %d flips", len(ch.Flipped))
		}
		for i, bf := range before.Features {
			af := after.Features[i]
			if bf.ID != af.ID || bf.Category != af.Category || bf.Description != af.Description ||
				!slices.Equal(bf.Steps, af.Steps) || bf.Verify != af.Verify {
				t.Fatalf("accepted a change to immutable fields of feature %d", i)
			}
			if bf.Passes != af.Passes && blankPtr(af.Evidence) {
				t.Fatalf("accepted a passes change without evidence on %q", bf.ID)
			}
			if bf.Passes && af.Passes && !blankPtr(bf.Evidence) && blankPtr(af.Evidence) {
				t.Fatalf("accepted removed evidence on %q", bf.ID)
			}
		}
	})
}

// FuzzStrictRead starts where TestStrictReferenceRandomEdits stops:
// edits of an encoded list, whose bytes the fast path is given so that
// it answers one-feature edits, compared with the strict reference by
// Parse, parseEdit and CheckTurnBytes alike (compareStrict).
func FuzzStrictRead(f *testing.F) {
	before, old, seeds := editSeeds(f)
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range seeds {
		f.Add(s)
		f.Add(mutate(r, s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareStrict(t, before, old, data)
	})
}
