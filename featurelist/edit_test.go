package featurelist

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// editSeeds are edits of Encode(base()): flips, evidence, garbage inside
// one feature, changes across features and outside them.
func editSeeds(t testing.TB) (before *List, old []byte, seeds [][]byte) {
	before = base()
	old, err := Encode(before)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*List)) []byte {
		l := before.Clone()
		f(&l)
		b, err := Encode(&l)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	seeds = [][]byte{
		old,
		edit(func(l *List) { l.Features[1].Passes, l.Features[1].Evidence = true, ev("it works") }),
		edit(func(l *List) { l.Features[3].Evidence = ev("a <longer> & \"quoted\" note\nover lines") }),
		edit(func(l *List) { l.Features[0].Passes, l.Features[1].Passes = true, true }),
		edit(func(l *List) { l.Goal = "another goal" }),
		edit(func(l *List) { l.Features[2].ID = "Bad Id" }),
		edit(func(l *List) { l.Features[2].Steps = append(l.Features[2].Steps, "") }),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"passes": false, "passes": true`), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"Passes": true, "passes": false`), 1),
		bytes.Replace(old, []byte("\n    {"), []byte("\n    1, {"), 2),
		bytes.Replace(old, []byte("\n    }"), []byte("\n    }, {}"), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"passes": fals`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": null, "x": "}, {"`), 1),
		// Not in Encode's form, but one feature's valid object: parsed
		// as an edit and not kept.
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"passes"  :  false`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": "\u00e9 \ud83d\ude00"`), 1),
		// Strictly refused inside one feature: a key twice or in another
		// case, half a surrogate pair, invalid UTF-8, an unknown key.
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"Evidence": "forged", "evidence": null`), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"PASSES": true`), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"paſſes": true, "passes": false`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": "\ud800"`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte("\"evidence\": \"\xff\""), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": null, "verify2": "true"`), 1),
		append(bytes.Clone(old), ']'),
	}
	return before, old, seeds
}

// checkEdit warms the cache with before's bytes, then checks that an edit
// parseEdit answers is parsed exactly as Parse parses it. It reports
// whether parseEdit answered.
func checkEdit(t *testing.T, before *List, old, data []byte) bool {
	t.Helper()
	if _, err := parseAndRemember("before.json", old); err != nil {
		t.Fatal(err)
	}
	got, ok := parseEdit(before, data)
	if !ok {
		return false
	}
	want, err := Parse("after.json", data)
	if err != nil {
		t.Fatalf("parseEdit accepted what Parse refuses (%v):\n%s", err, data)
	}
	if !Equal(got, want) {
		t.Fatalf("parseEdit and Parse differ:\n%+v\n%+v", got, want)
	}
	return true
}

func TestParseEditIsParse(t *testing.T) {
	before, old, seeds := editSeeds(t)
	hits := 0
	for _, data := range seeds {
		if checkEdit(t, before, old, data) {
			hits++
		}
	}
	if hits < 3 {
		t.Errorf("parseEdit answered %d of the seeds, want the one-feature edits at least", hits)
	}
	// A flip kept for the next turn: the following edit starts from it.
	l := before.Clone()
	l.Features[1].Passes, l.Features[1].Evidence = true, ev("ok")
	next, _ := Encode(&l)
	if got, ok := parseEdit(before, next); !ok || !Equal(got, &l) {
		t.Fatal("a one-feature flip was not parsed as an edit")
	}
	l2 := l.Clone()
	l2.Features[3].Passes, l2.Features[3].Evidence = true, ev("fixed")
	again, _ := Encode(&l2)
	if got, ok := parseEdit(&l, again); !ok || !Equal(got, &l2) {
		t.Fatal("the next turn's flip was not parsed as an edit of the list kept")
	}
}

// TestParseEditRandomEdits mutates the seeds at random (a fixed seed):
// whatever parseEdit answers, Parse must answer the same.
func TestParseEditRandomEdits(t *testing.T) {
	before, old, seeds := editSeeds(t)
	r := rand.New(rand.NewPCG(1, 2))
	hits := 0
	alphabet := []byte(`{}[]",:\ 0123456789abcdefnulltrue` + "\n\t")
	for n := 0; n < 20000; n++ {
		data := bytes.Clone(seeds[r.IntN(len(seeds))])
		for range 1 + r.IntN(3) {
			i := r.IntN(len(data))
			switch r.IntN(3) {
			case 0:
				data[i] = alphabet[r.IntN(len(alphabet))]
			case 1:
				data = append(data[:i], data[i+1:]...)
			default:
				data = append(data[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, data[i:]...)...)
			}
		}
		if checkEdit(t, before, old, data) {
			hits++
		}
	}
	if hits < 200 {
		t.Errorf("parseEdit answered %d of 20000 random edits; the test does not reach it", hits)
	}
	t.Logf("parseEdit answered %d of 20000 random edits", hits)
}

// TestParseEditResultIsTheCallers: changing a list parseEdit returned, in
// place, changes nothing parseEdit remembered for the next turn.
func TestParseEditResultIsTheCallers(t *testing.T) {
	before, old, _ := editSeeds(t)
	if _, err := parseAndRemember("before.json", old); err != nil {
		t.Fatal(err)
	}
	l := before.Clone()
	l.Features[1].Passes, l.Features[1].Evidence = true, ev("ok")
	next, _ := Encode(&l)
	got, ok := parseEdit(before, next)
	if !ok {
		t.Fatal("a one-feature flip was not parsed as an edit")
	}
	scribble(got)
	l2 := l.Clone()
	l2.Features[3].Passes, l2.Features[3].Evidence = true, ev("fixed")
	again, _ := Encode(&l2)
	got, ok = parseEdit(&l, again)
	if !ok || !Equal(got, &l2) {
		t.Fatalf("the next turn's flip was not parsed as an edit of the list kept (ok %v):\n%+v", ok, got)
	}
	scribble(got)
	if got, ok := parseEdit(&l2, again); !ok || !Equal(got, &l2) {
		t.Fatalf("the unchanged bytes did not give the list kept (ok %v):\n%+v", ok, got)
	}
}

// scribble overwrites every text of l in place.
func scribble(l *List) {
	for i := range l.Features {
		f := &l.Features[i]
		for k := range f.Steps {
			f.Steps[k] = "scribbled"
		}
		if f.Evidence != nil {
			*f.Evidence = "scribbled"
		}
		f.Description = "scribbled"
	}
}
