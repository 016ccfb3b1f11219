package featurelist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/grub-dev/grub/schemas"
)

// FileName is the feature list's file name inside a harness folder. Marshal
// uses it to name the document when its own output fails the schema.
const FileName = "feature-list.json"

// Parse validates data against schemas.FeatureList and decodes it. file names
// the document in errors. A document that is not JSON or breaks the schema
// is reported as a *schemas.Error naming the file, the JSON pointer and the
// rule; any other error means the schema itself could not be loaded.
// The document is read strictly (schemas.DecodeJSON): nothing after the
// value, no key twice or in two cases, valid UTF-8; the schema refuses
// unknown keys.
func Parse(file string, data []byte) (*List, error) {
	doc, err := schemas.Decode(schemas.FeatureList, file, data)
	if err != nil {
		return nil, err
	}
	l, err := decode(doc)
	if err != nil {
		// The schema accepted the document, so this is a decoder disagreement
		// such as "version": 1.0 (a JSON number equal to 1 that is not an
		// integer); report it as a rule the document breaks.
		v := schemas.Violation{Rule: err.Error()}
		var ve *versionError
		if errors.As(err, &ve) {
			v.Pointer = "/version"
		}
		return nil, &schemas.Error{File: file, Schema: schemas.FeatureList, Violations: []schemas.Violation{v}}
	}
	return l, nil
}

// versionError is a version number the schema accepts (it equals 1) but
// that is not written as an integer.
type versionError struct{ text string }

func (e *versionError) Error() string {
	return "version " + e.text + " is not a whole number; write 1"
}

// decode builds a List from a document that passed the schema, as
// schemas.Decode returns it. It reads exactly the keys the schema
// checked: encoding/json would also match keys that differ in case
// ("Passes"), letting a document say one thing to the schema and another
// to grub.
func decode(v any) (*List, error) {
	doc, _ := v.(map[string]any)
	l := &List{}
	if n, ok := doc["version"].(json.Number); ok {
		v, err := strconv.Atoi(n.String())
		if err != nil {
			return nil, &versionError{n.String()}
		}
		l.Version = v
	}
	l.Goal, _ = doc["goal"].(string)
	items, _ := doc["features"].([]any)
	l.Features = make([]Feature, 0, len(items))
	for _, it := range items {
		l.Features = append(l.Features, decodeFeature(it))
	}
	return l, nil
}

// decodeFeature is decode for one feature of the list.
func decodeFeature(v any) Feature {
	m, _ := v.(map[string]any)
	f := Feature{}
	f.ID, _ = m["id"].(string)
	f.Category, _ = m["category"].(string)
	f.Description, _ = m["description"].(string)
	steps, _ := m["steps"].([]any)
	f.Steps = make([]string, 0, len(steps))
	for _, s := range steps {
		str, _ := s.(string)
		f.Steps = append(f.Steps, str)
	}
	f.Verify, _ = m["verify"].(string)
	f.Passes, _ = m["passes"].(bool)
	if e, ok := m["evidence"].(string); ok {
		f.Evidence = &e
	}
	return f
}

// Marshal renders l as stable, indented JSON (two spaces, a trailing
// newline, HTML characters not escaped), the exact bytes grub writes to
// feature-list.json. Nil steps are written as an empty array. The output is
// validated against the schema, so a list that could not be read back (an
// empty goal, a malformed id) is an error rather than a bad file: in Go
// (Valid), and by the schema's validator on the bytes when Valid cannot
// say yes, which gives the error.
func Marshal(l *List) ([]byte, error) {
	data, err := Encode(l)
	if err != nil {
		return nil, err
	}
	if Valid(withSteps(l)) {
		return data, nil
	}
	if err := schemas.Validate(schemas.FeatureList, FileName, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Encode is Marshal without the schema check: the bytes grub would write
// for l, to compare with what a file holds.
func Encode(l *List) ([]byte, error) {
	if l == nil {
		return nil, errors.New("featurelist: cannot marshal a nil list")
	}
	c := withSteps(l)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("featurelist: %w", err)
	}
	return buf.Bytes(), nil
}

// Valid reports whether l, as encoding/json encodes it (nil features and
// steps as null, an empty verify left out), is certainly valid against the
// feature-list schema, without encoding or parsing it: l as a JSON value
// goes through schemas.PlainValidList. No means "check the encoded list
// against the schema" (schemas.ValidateGo), which gives the error.
func Valid(l *List) bool {
	if l == nil {
		return false
	}
	features := make([]any, len(l.Features))
	for i, f := range l.Features {
		var steps any // nil steps are null
		if f.Steps != nil {
			list := make([]any, len(f.Steps))
			for j, s := range f.Steps {
				list[j] = s
			}
			steps = list
		}
		m := map[string]any{"id": f.ID, "category": f.Category, "description": f.Description, "steps": steps, "passes": f.Passes, "evidence": nil}
		if f.Verify != "" {
			m["verify"] = f.Verify
		}
		if f.Evidence != nil {
			m["evidence"] = *f.Evidence
		}
		features[i] = m
	}
	doc := map[string]any{"version": json.Number(strconv.Itoa(l.Version)), "goal": l.Goal, "features": features}
	if l.Features == nil {
		doc["features"] = nil
	}
	return schemas.PlainValidList(doc)
}
