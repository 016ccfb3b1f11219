package featurelist

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// refRead is a strict reader of feature lists written for the tests,
// sharing nothing with Parse, schemas.DecodeJSON or the schema: it walks
// encoding/json's Decoder.Token stream, refuses a key given twice or in
// two cases in one object, anything but white space after the value,
// invalid UTF-8 and \u escapes of half a surrogate pair (checked on each
// string's raw bytes, which Token does not show), and then applies the
// feature list's rules by hand: exactly the schema's keys, their types,
// version written 1, the id pattern. It returns the list, or ok false.
func refRead(data []byte) (*List, bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	r := &refReader{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	r.dec.UseNumber()
	v, err := r.value()
	if err != nil {
		return nil, false
	}
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, false // more after the value
	}
	return refList(v)
}

type refReader struct {
	data []byte
	dec  *json.Decoder
	end  int // where the last token ended
}

var errRef = errors.New("refused")

// token is the next token, with the raw bytes of a string checked.
func (r *refReader) token() (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		return nil, err
	}
	start, end := r.end, int(r.dec.InputOffset())
	r.end = end
	if _, ok := t.(string); ok {
		raw := bytes.TrimLeft(r.data[start:end], " \t\r\n,:")
		if !refEscapesOK(raw) {
			return nil, errRef
		}
	}
	return t, nil
}

func (r *refReader) value() (any, error) {
	t, err := r.token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		obj := map[string]any{}
		var keys []string
		for r.dec.More() {
			k, err := r.token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			for _, seen := range keys {
				if strings.EqualFold(seen, key) { // equal, or equal but for case
					return nil, errRef
				}
			}
			keys = append(keys, key)
			if obj[key], err = r.value(); err != nil {
				return nil, err
			}
		}
		_, err := r.token() // '}'
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for r.dec.More() {
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := r.token() // ']'
		return arr, err
	}
	return t, nil
}

// refEscapesOK checks a string literal's \u escapes: UTF-16 code units
// that must make whole characters.
func refEscapesOK(raw []byte) bool {
	var units []uint16
	flush := func() bool {
		for i := 0; i < len(units); i++ {
			u := rune(units[i])
			if !utf16.IsSurrogate(u) {
				continue
			}
			if i+1 >= len(units) || utf16.DecodeRune(u, rune(units[i+1])) == utf8.RuneError {
				return false
			}
			i++
		}
		units = units[:0]
		return true
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if !flush() {
				return false
			}
			continue
		}
		if raw[i+1] != 'u' {
			if !flush() {
				return false
			}
			i++
			continue
		}
		n, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		units = append(units, uint16(n))
		i += 5
	}
	return flush()
}

var refID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// refList applies the feature list's rules to a decoded document.
func refList(v any) (*List, bool) {
	doc, ok := v.(map[string]any)
	if !ok || len(doc) != 3 || doc["version"] != json.Number("1") {
		return nil, false
	}
	goal, ok := doc["goal"].(string)
	items, isArr := doc["features"].([]any)
	if !ok || goal == "" || !isArr {
		return nil, false
	}
	l := &List{Version: 1, Goal: goal, Features: []Feature{}}
	for _, it := range items {
		f, ok := refFeature(it)
		if !ok {
			return nil, false
		}
		l.Features = append(l.Features, f)
	}
	return l, true
}

func refFeature(v any) (Feature, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return Feature{}, false
	}
	allowed := map[string]bool{"id": true, "category": true, "description": true, "steps": true, "verify": true, "passes": true, "evidence": true}
	for k := range m {
		if !allowed[k] {
			return Feature{}, false
		}
	}
	var f Feature
	var okID, okCat, okDesc, okPasses, okSteps bool
	f.ID, okID = m["id"].(string)
	f.Category, okCat = m["category"].(string)
	f.Description, okDesc = m["description"].(string)
	f.Passes, okPasses = m["passes"].(bool)
	steps, okSteps := m["steps"].([]any)
	if !okID || !refID.MatchString(f.ID) || len(f.ID) > 80 || !okCat || f.Category == "" || !okDesc || f.Description == "" || !okPasses || !okSteps {
		return Feature{}, false
	}
	f.Steps = []string{}
	for _, s := range steps {
		str, ok := s.(string)
		if !ok || str == "" {
			return Feature{}, false
		}
		f.Steps = append(f.Steps, str)
	}
	if verify, there := m["verify"]; there {
		if f.Verify, ok = verify.(string); !ok {
			return Feature{}, false
		}
	}
	evidence, there := m["evidence"]
	switch e := evidence.(type) {
	case string:
		f.Evidence = &e
	case nil:
		if !there {
			return Feature{}, false
		}
	default:
		return Feature{}, false
	}
	return f, true
}
