package featurelist

import (
	"bytes"
	"math/rand/v2"
	"slices"
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
		// as an edit.
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

// checkEdit checks the fast path on data, an edit of old =
// Marshal(before): what parseEdit answers is what Parse and the strict
// reference reader (refRead) read, and CheckTurnBytes given old gives the
// verdict, changes and list it gives without (the full parse). It
// reports whether parseEdit answered.
func checkEdit(t *testing.T, before *List, old, data []byte) bool {
	t.Helper()
	want, err := Parse("after.json", data)
	ref, refOK := refRead(data)
	if (err == nil) != refOK || refOK && !Equal(want, ref) {
		t.Fatalf("Parse (%v) and the strict reference (%v) disagree:\n%s", err, refOK, data)
	}
	got, ok := parseEdit(before, old, data)
	if ok && err != nil {
		t.Fatalf("parseEdit accepted what Parse refuses (%v):\n%s", err, data)
	}
	if ok && !Equal(got, want) {
		t.Fatalf("parseEdit and Parse differ:\n%+v\n%+v\n%s", got, want, data)
	}
	if !ok {
		return false // CheckTurnBytes parses it in full, with or without old
	}
	fastCh, fastVs, err1 := CheckTurnBytes("after.json", before, old, data)
	fullCh, fullVs, err2 := CheckTurnBytes("after.json", before, nil, data)
	if err1 != nil || err2 != nil {
		t.Fatalf("CheckTurnBytes: %v, %v", err1, err2)
	}
	if !sameVerdict(fastCh, fastVs, fullCh, fullVs) {
		t.Fatalf("CheckTurnBytes with the accepted bytes: %+v %q %+v\nwithout: %+v %q %+v\n%s",
			fastCh, Describe(fastVs), fastCh.After, fullCh, Describe(fullVs), fullCh.After, data)
	}
	return ok
}

// sameVerdict reports whether two answers of CheckTurnBytes are the same:
// the changes, the list and the violations. A list that does not parse
// is one violation carrying the schema's error, whose violations the
// validator lists in no fixed order: then only that is compared.
func sameVerdict(a Change, avs []Violation, b Change, bvs []Violation) bool {
	if !slices.Equal(a.Flipped, b.Flipped) || !slices.Equal(a.Regressed, b.Regressed) || !Equal(a.After, b.After) {
		return false
	}
	if a.After == nil {
		return len(avs) == 1 && len(bvs) == 1
	}
	return Describe(avs) == Describe(bvs)
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
	// The next turn starts from the list the flip left, with its bytes.
	l := before.Clone()
	l.Features[1].Passes, l.Features[1].Evidence = true, ev("ok")
	next, _ := Encode(&l)
	if got, ok := parseEdit(before, old, next); !ok || !Equal(got, &l) {
		t.Fatal("a one-feature flip was not parsed as an edit")
	}
	l2 := l.Clone()
	l2.Features[3].Passes, l2.Features[3].Evidence = true, ev("fixed")
	again, _ := Encode(&l2)
	if got, ok := parseEdit(&l, next, again); !ok || !Equal(got, &l2) {
		t.Fatal("the next turn's flip was not parsed as an edit of the list it started from")
	}
	if got, ok := parseEdit(&l2, again, again); !ok || !Equal(got, &l2) {
		t.Fatal("unchanged bytes did not give the list before the turn")
	}
}

// TestParseEditNeedsTheListsBytes: old bytes that are not the list's where
// the edit is are not taken, whatever the edit.
func TestParseEditNeedsTheListsBytes(t *testing.T) {
	before, _, _ := editSeeds(t)
	other := before.Clone()
	other.Features[1].Evidence = ev("not the accepted list")
	old, _ := Encode(&other)
	flipped := other.Clone()
	flipped.Features[1].Passes = true
	data, _ := Encode(&flipped)
	if got, ok := parseEdit(before, old, data); ok {
		t.Fatalf("parseEdit took bytes of another list as before's: %+v", got)
	}
	if _, ok := parseEdit(before, nil, data); ok {
		t.Fatal("parseEdit answered without the list's bytes")
	}
	// A list with a string that is not UTF-8 (Marshal writes \ufffd for
	// it, Parse reads U+FFFD): never the fast path.
	bad := before.Clone()
	bad.Goal = "goal \xff"
	old, _ = Encode(&bad)
	if _, ok := parseEdit(&bad, old, old); ok {
		t.Fatal("parseEdit answered for bytes with a \\ufffd escape")
	}
}

// hostileBefores are lists before a turn for the random edits: the test
// list, a larger one with text that needs escapes, passing features,
// verify commands and nil steps (which Marshal writes as []), one whose
// goal is not UTF-8 (Marshal writes \ufffd: the fast path declines), and
// one with two features alike.
func hostileBefores() []*List {
	big := sample(15)
	for i := range big.Features {
		f := &big.Features[i]
		switch i % 5 {
		case 0:
			f.Passes, f.Evidence = true, ev(`ran "make test": ok <&> é 😀 \ a`+"\ttab")
		case 1:
			f.Verify = "go test ./... -run 'Test" + f.ID + "'"
		case 2:
			f.Steps = nil
		case 3:
			f.Evidence = ev("failed before: exit 1\nsee log")
		}
	}
	latin := base()
	latin.Goal = "goal \xff latin-1"
	dup := sample(6) // two features alike, id and all: found by counting
	dup.Features[4] = dup.Features[1].Clone()
	return []*List{base(), big, latin, dup}
}

// hostileKeys and hostileStrings are what hostileEdit puts in: keys given
// twice or in another case, unknown keys; escapes, whole and half
// surrogate pairs, invalid UTF-8, text that looks like JSON.
var (
	hostileKeys = []string{`"passes": true, `, `"Passes": true, `, `"PASSES": false, `, `"paſſes": true, `, `"evidence": "x", `,
		`"Evidence": "forged", `, `"EVIDENCE": null, `, `"id": "other", `, `"ID": "x", `, `"verify": "true", `,
		`"Verify": "rm -rf /", `, `"verify2": "", `, `"steps": [], `, `"": 0, `, `"note": {}, `}
	hostileStrings = []string{`\u00e9`, `\ud83d\ude00`, `\ud800`, `\udfff`, `\ud800\u0041`, `\u0000`, `\u00`, `\\u0041`,
		"\xff", "\xc3", "\xed\xa0\x80", "\u2028", `\"`, `\`, `é`, `}, {`, `"], "x": ["`, "ok"}
)

// featureEdit is an edit of data inside feature k, whose object is sp.
type featureEdit struct {
	r     *rand.Rand
	data  []byte
	spans [][2]int
	k     int
	sp    [2]int
}

// insert puts piece at at.
func (e *featureEdit) insert(at int, piece string) []byte {
	return append(e.data[:at:at], append([]byte(piece), e.data[at:]...)...)
}

// replace replaces the first old in the feature with new.
func (e *featureEdit) replace(old, new string) []byte {
	i := bytes.Index(e.data[e.sp[0]:e.sp[1]], []byte(old))
	if i < 0 {
		return e.data
	}
	at := e.sp[0] + i
	return append(e.data[:at:at], append([]byte(new), e.data[at+len(old):]...)...)
}

func (e *featureEdit) str() string { return hostileStrings[e.r.IntN(len(hostileStrings))] }

// hostileEdit makes one random edit of data, mostly inside one feature's
// object (so that the fast path is asked) and often hostile: keys given
// twice or in another case, unknown keys, trailing bytes, brackets,
// unicode escapes, invalid UTF-8, edits spanning two features, edits to
// the id or verify, white space, legal flips.
func hostileEdit(r *rand.Rand, data []byte) []byte {
	spans, _ := featureSpans(data, bytes.Count(data, []byte(featureOpen)))
	if len(spans) == 0 || r.IntN(6) == 0 {
		return mutate(r, data)
	}
	k := r.IntN(len(spans))
	e := &featureEdit{r: r, data: data, spans: spans, k: k, sp: spans[k]}
	sp := e.sp
	in := sp[0] + r.IntN(sp[1]-sp[0]+1) // a position inside the object
	switch r.IntN(12) {
	case 0: // a key put in after the object's '{' or before "passes"
		at := sp[0] + 1
		if i := bytes.Index(data[sp[0]:sp[1]], []byte(`"passes"`)); i >= 0 && r.IntN(2) == 0 {
			at = sp[0] + i
		}
		return e.insert(at, hostileKeys[r.IntN(len(hostileKeys))])
	case 1: // trailing bytes, or bytes before the list
		tail := []string{"]", "}", " ", "\n", "x", ",", "{}", "\x00", "\r\n", "// c"}[r.IntN(10)]
		if r.IntN(5) == 0 {
			return e.insert(0, tail)
		}
		return append(bytes.Clone(data), tail...)
	case 2: // a bracket or punctuation inside the feature
		return e.insert(in, []string{"[", "]", "{", "}", ",", ":", `"`, "null", "1"}[r.IntN(9)])
	case 3: // new evidence with escapes, whole or not
		if bytes.Contains(data[sp[0]:sp[1]], []byte(`"evidence": null`)) {
			return e.replace(`"evidence": null`, `"evidence": "`+e.str()+e.str()+`"`)
		}
		return e.replace(`"evidence": "`, `"evidence": "`+e.str())
	case 4:
		return e.twoFeatures(in)
	case 5:
		return e.id()
	case 6:
		return e.verify()
	case 7: // white space between tokens, around the object, or inside a string
		ws := []string{" ", "\n", "\t", "\r\n", "  \n      ", "\u00a0", "\f"}[r.IntN(7)]
		return e.insert([]int{sp[0], sp[0] + 1, sp[1], sp[1] - 1, in}[r.IntN(5)], ws)
	case 8, 9:
		return e.flip()
	case 10: // a step changed, removed or made empty
		return e.replace(`"steps": [`, []string{`"steps": ["",`, `"steps": [1,`, `"steps": [ `, `"steps": ["s", `}[r.IntN(4)])
	default: // random hostile bytes inside the feature
		return e.insert(in, hostile[r.IntN(len(hostile))])
	}
}

// twoFeatures is an edit spanning feature k and the next, or the
// boundary between them.
func (e *featureEdit) twoFeatures(in int) []byte {
	if e.k+1 >= len(e.spans) {
		return e.insert(e.sp[1], ", {}")
	}
	data, sp, next := e.data, e.sp, e.spans[e.k+1]
	switch e.r.IntN(3) {
	case 0: // both flipped
		d := bytes.Replace(data[sp[0]:next[1]], []byte(`"passes": false`), []byte(`"passes": true`), 2)
		return append(append(bytes.Clone(data[:sp[0]]), d...), data[next[1]:]...)
	case 1: // from inside one to inside the next, cut out
		return append(bytes.Clone(data[:in]), data[next[0]+e.r.IntN(next[1]-next[0]):]...)
	default: // the boundary changed
		return append(append(bytes.Clone(data[:sp[1]]), []string{",", " ,", "], [", "},{"}[e.r.IntN(4)]...), data[next[0]:]...)
	}
}

// id changes the feature's id: to another valid one, one the list has,
// or one the schema refuses.
func (e *featureEdit) id() []byte {
	ids := []string{"fa", "fb", "new-id", "Bad Id", "a--b", "", "-x", "fa ", "fä"}
	i := bytes.Index(e.data[e.sp[0]:e.sp[1]], []byte(`"id": "`))
	if i < 0 {
		return e.data
	}
	at := e.sp[0] + i + len(`"id": "`)
	j := bytes.IndexByte(e.data[at:e.sp[1]], '"')
	if j < 0 {
		return e.data
	}
	return append(append(e.data[:at:at], ids[e.r.IntN(len(ids))]...), e.data[at+j:]...)
}

// verify changes, removes or adds the feature's verify command.
func (e *featureEdit) verify() []byte {
	if !bytes.Contains(e.data[e.sp[0]:e.sp[1]], []byte(`"verify": "`)) {
		return e.replace(`"passes"`, `"verify": "make check",
      "passes"`)
	}
	if e.r.IntN(2) == 0 {
		return e.replace(`"verify": "`, `"verify": "x`)
	}
	at := e.sp[0] + bytes.Index(e.data[e.sp[0]:e.sp[1]], []byte(`"verify": "`))
	j := bytes.Index(e.data[at:e.sp[1]], []byte(`",`))
	if j < 0 {
		return e.data
	}
	return append(bytes.Clone(e.data[:at]), e.data[at+j+len(`",`):]...)
}

// flip is a legal flip or regression of the feature, with new evidence.
func (e *featureEdit) flip() []byte {
	if bytes.Contains(e.data[e.sp[0]:e.sp[1]], []byte(`"passes": false`)) {
		e.data = e.replace(`"passes": false`, `"passes": true`)
	} else {
		e.data = e.replace(`"passes": true`, `"passes": false`)
	}
	e.sp[1]-- // the object's end moved by a byte at most: this is still inside it
	if bytes.Contains(e.data[e.sp[0]:e.sp[1]], []byte(`"evidence": null`)) {
		return e.replace(`"evidence": null`, `"evidence": "ran it: ok `+e.str()+`"`)
	}
	return e.replace(`"evidence": "`, `"evidence": "new: `)
}

// TestParseEditHostileEdits: 20,000 random hostile edits (a fixed seed)
// of four lists, one to three edits each, each checked by checkEdit: the
// fast path, Parse, the strict reference reader and CheckTurnBytes with
// and without the accepted bytes agree on every one.
func TestParseEditHostileEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var hits, accepted, edits int
	befores := hostileBefores()
	for _, before := range befores {
		old, err := Encode(before)
		if err != nil {
			t.Fatal(err)
		}
		for range (20000 + len(befores) - 1) / len(befores) {
			data := old
			for range 1 + r.IntN(3) {
				data = hostileEdit(r, data)
			}
			edits++
			if checkEdit(t, before, old, data) {
				hits++
			}
			if _, ok := refRead(data); ok {
				accepted++
			}
		}
	}
	t.Logf("of %d hostile edits: %d accepted, %d answered by the fast path", edits, accepted, hits)
	if edits < 20000 || hits < edits/20 || accepted < edits/10 || edits-accepted < edits/3 {
		t.Errorf("the edits do not reach every case: %d edits, %d accepted, %d fast", edits, accepted, hits)
	}
}

// TestParseEditResultIsTheCallers: the list parseEdit returns shares
// nothing with the list before the turn, which the caller keeps.
func TestParseEditResultIsTheCallers(t *testing.T) {
	before, old, _ := editSeeds(t)
	keep := before.Clone()
	l := before.Clone()
	l.Features[1].Passes, l.Features[1].Evidence = true, ev("ok")
	next, _ := Encode(&l)
	for _, data := range [][]byte{next, old} {
		got, ok := parseEdit(before, old, data)
		if !ok {
			t.Fatal("a one-feature flip or no change was not parsed as an edit")
		}
		scribble(got)
		if !Equal(before, &keep) {
			t.Fatalf("changing parseEdit's list changed the list before the turn:\n%+v", before)
		}
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
