package schemas

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// TestPlainValidListSchema pins the feature-list schema that
// PlainValidList mirrors: change the schema, and change PlainValidList
// with it (then update the digest here).
func TestPlainValidListSchema(t *testing.T) {
	data, err := files.ReadFile(FeatureList)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	const want = "3576423989c7b9fc940cb6e87aed682573b1ace5ab4f3baba2643e2ea22dda91"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("%s changed (sha256 %s): make PlainValidList check what it demands now, then update this digest", FeatureList, got)
	}
}

// listCases are feature lists the fast check and the schema must agree
// on whenever the fast check says yes.
var listCases = []string{
	`{"version":1,"goal":"g","features":[]}`,
	`{"version":1,"goal":"g","features":[{"id":"a-b","category":"c","description":"d","steps":["s"],"verify":"true","passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a1","category":"c","description":"d","steps":[],"passes":true,"evidence":"e","extra":[1]}],"more":{}}`,
	`{"version":1.0,"goal":"g","features":[]}`,
	`{"version":"1","goal":"g","features":[]}`,
	`{"version":2,"goal":"g","features":[]}`,
	`{"version":1,"goal":"","features":[]}`,
	`{"version":1,"goal":"g"}`,
	`{"version":1,"goal":"g","features":{}}`,
	`{"version":1,"goal":"g","features":[1]}`,
	`{"version":1,"goal":"g","features":[{"id":"Bad","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a--b","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"-a","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a-","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"` + string(bytes.Repeat([]byte("a"), 80)) + `","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"` + string(bytes.Repeat([]byte("a"), 81)) + `","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"","description":"d","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"","steps":[],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[""],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[1],"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":null,"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"verify":null,"passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":"no","evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":false}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":false,"evidence":1}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"evidence":null}]}`,
	// Unknown keys, which the schema refuses: one in place of verify, one
	// beside it, one in another case, one beside the list's own.
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"note":"x","passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"verify":"v","note":"x","passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"Verify":"v","passes":false,"evidence":null}]}`,
	`{"version":1,"goal":"g","features":[],"notes":null}`,
	`[]`, `null`, `"x"`,
}

// TestPlainValidListAgrees checks that the fast check accepts exactly the
// plain lists the schema accepts (it may refuse more: the schema decides
// those).
func TestPlainValidListAgrees(t *testing.T) {
	for _, doc := range listCases {
		fast, full := plainAndSchema(t, doc)
		if fast && !full {
			t.Errorf("PlainValidList accepts what the schema refuses: %s", doc)
		}
		if full && !fast && !bytes.Contains([]byte(doc), []byte("1.0")) {
			t.Errorf("PlainValidList refuses a plain valid list: %s", doc)
		}
	}
}

// plainAndSchema is what PlainValidList and the schema alone say of doc.
func plainAndSchema(t testing.TB, doc string) (fast, full bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false, false
	}
	s, err := schema(FeatureList)
	if err != nil {
		t.Fatal(err)
	}
	return PlainValidList(v), s.Validate(v) == nil
}

func FuzzPlainValidList(f *testing.F) {
	for _, doc := range listCases {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if fast, full := plainAndSchema(t, doc); fast && !full {
			t.Fatalf("PlainValidList accepts what the schema refuses: %s", doc)
		}
	})
}
