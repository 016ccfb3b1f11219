package featurelist

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// hostile are the pieces a random edit puts into a feature list: keys
// given twice or in another case (as encoding/json, a Go struct, reads
// them), unknown keys, a stray bracket, invalid UTF-8, half a surrogate
// pair, and plain JSON punctuation.
var hostile = []string{
	`"passes": true, `, `"PASSES": true, `, `"Passes": false, `, `"paſſes": true, `,
	`"evidence": "again", `, `"Evidence": "forged", `, `"verify": "true", `, `"Verify": "true", `,
	`"ID": "x", `, `"iD": "fb", `, `"note": 1, `, `"": 0, `,
	`]`, `}`, `,`, `{`, `[`, `:`, `"`, ` `, "\n", `1`, `null`, `true`,
	"\xff", "\xc3", "\xed\xa0\x80", `\ud800`, `\udfff`, `\ud83d\ude00`, `\u0041`, `\\`, `\"`, `é`,
}

// mutate makes a random edit of data: one to three bytes or hostile
// pieces put in, bytes taken out or changed, or a key's text replaced.
func mutate(r *rand.Rand, data []byte) []byte {
	data = bytes.Clone(data)
	for range 1 + r.IntN(2) {
		i := r.IntN(len(data) + 1)
		switch r.IntN(8) {
		case 0:
			piece := hostile[r.IntN(len(hostile))]
			data = append(data[:i:i], append([]byte(piece), data[i:]...)...)
		case 1:
			if i < len(data) {
				data = append(data[:i:i], data[i+1:]...)
			}
		case 2:
			if i < len(data) {
				const alphabet = `{}[]",:\ 0123456789abcdefnulltrueEPS`
				data[i] = alphabet[r.IntN(len(alphabet))]
			}
		case 3:
			keys := []string{`"passes"`, `"evidence"`, `"verify"`, `"id"`, `"steps"`}
			k := keys[r.IntN(len(keys))]
			repl := []string{strings.ToUpper(k), `"Evidence"`, `"pa\u0073ses"`, `"passes", "passes"`, k + `: 1, ` + k}
			data = bytes.Replace(data, []byte(k), []byte(repl[r.IntN(len(repl))]), 1+r.IntN(2))
		case 4:
			data = append(data, hostile[r.IntN(len(hostile))]...)
		case 5: // white space, mostly between tokens
			data = append(data[:i:i], append([]byte{" \n\t\r"[r.IntN(4)]}, data[i:]...)...)
		default: // new evidence text in one feature, hostile or not
			piece := hostile[r.IntN(len(hostile))]
			if r.IntN(2) == 0 {
				piece = "ran it: ok"
			}
			data = replaceNth(data, `"evidence": null`, `"evidence": "`+piece+`"`, r.IntN(4))
		}
	}
	return data
}

// replaceNth replaces the n-th occurrence of old in data (none when
// there are fewer).
func replaceNth(data []byte, old, new string, n int) []byte {
	at := 0
	for range n {
		i := bytes.Index(data[at:], []byte(old))
		if i < 0 {
			return data
		}
		at += i + len(old)
	}
	i := bytes.Index(data[at:], []byte(old))
	if i < 0 {
		return data
	}
	return append(data[:at+i:at+i], append([]byte(new), data[at+i+len(old):]...)...)
}

// TestStrictReferenceRandomEdits mutates the edit seeds at random (a
// fixed seed; FuzzStrictRead goes on from there) and compares, for each edit, the strict reference reader
// (refRead) with Parse, with the one-feature fast path (parseEdit) and
// with CheckTurnBytes: each accepts exactly what refRead accepts, as
// the list refRead reads.
func TestStrictReferenceRandomEdits(t *testing.T) {
	before, old, seeds := editSeeds(t)
	r := rand.New(rand.NewPCG(7, 8))
	var fast, accepted, refusedJSON int
	const edits = 5000
	for n := range edits {
		data := seeds[r.IntN(len(seeds))]
		if n > 0 { // the seeds themselves first
			data = mutate(r, data)
		}
		if compareStrict(t, before, old, data) {
			fast++
		}
		if _, ok := refRead(data); ok {
			accepted++
		} else if json.Valid(data) {
			refusedJSON++ // JSON encoding/json reads, refused as others may read it differently
		}
	}
	t.Logf("of %d edits: %d accepted, %d refused though encoding/json reads them, %d answered by the fast path", edits, accepted, refusedJSON, fast)
	if fast < edits/40 || accepted < edits/12 || refusedJSON < edits/4 {
		t.Errorf("the edits do not reach every case: %d accepted, %d refused JSON, %d fast", accepted, refusedJSON, fast)
	}
}

// compareStrict checks Parse, parseEdit (given old, Marshal(before)) and
// CheckTurnBytes (with and without old) against refRead on data, and
// reports whether the fast path answered.
func compareStrict(t *testing.T, before *List, old, data []byte) bool {
	t.Helper()
	want, ok := refRead(data)
	got, err := Parse("after.json", data)
	if (err == nil) != ok {
		t.Fatalf("Parse error %v, reference accepts %v:\n%s", err, ok, data)
	}
	if ok && !Equal(got, want) {
		t.Fatalf("Parse and the reference read different lists:\n%+v\n%+v\n%s", got, want, data)
	}
	edit, answered := parseEdit(before, old, data)
	if answered && (!ok || !Equal(edit, want)) {
		t.Fatalf("the fast path read %+v, the reference accepts %v (%+v):\n%s", edit, ok, want, data)
	}
	for _, beforeData := range [][]byte{old, nil} {
		ch, vs, err := CheckTurnBytes("after.json", before, beforeData, data)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ok && (ch.After == nil || !Equal(ch.After, want)):
			t.Fatalf("CheckTurnBytes read %+v (%s), the reference %+v:\n%s", ch.After, Describe(vs), want, data)
		case !ok && (len(vs) == 0 || ch.After != nil):
			t.Fatalf("CheckTurnBytes accepted what the reference refuses:\n%s", data)
		}
	}
	return answered
}

// TestStrictReferenceReader pins the reference itself, so that the
// comparison above cannot pass by both readers being wrong the same way.
func TestStrictReferenceReader(t *testing.T) {
	_, old, _ := editSeeds(t)
	if _, ok := refRead(old); !ok {
		t.Fatal("the reference refuses an encoded list")
	}
	for _, bad := range [][]byte{
		append(bytes.Clone(old), ']'),
		append(bytes.Clone(old), "\n}"...),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"passes": false, "passes": true`), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"passes": false, "PASSES": true`), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"PASSES": true`), 1),
		bytes.Replace(old, []byte(`"passes": false`), []byte(`"paſſes": false`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": null, "x": 1`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": "\ud800"`), 1),
		bytes.Replace(old, []byte(`"evidence": null`), []byte("\"evidence\": \"\xff\""), 1),
		bytes.Replace(old, []byte(`"version": 1`), []byte(`"version": 1.0`), 1),
		bytes.Replace(old, []byte(`"steps": [`), []byte(`"steps": ["",`), 1),
	} {
		if _, ok := refRead(bad); ok {
			t.Errorf("the reference accepts:\n%s", bad)
		}
	}
	good := bytes.Replace(old, []byte(`"evidence": null`), []byte(`"evidence": "\ud83d\ude00 \\ud800"`), 1)
	if l, ok := refRead(good); !ok || l.Features[0].Evidence == nil || *l.Features[0].Evidence != "😀 \\ud800" {
		t.Errorf("the reference refuses or misreads a whole surrogate pair: %v", ok)
	}
}
