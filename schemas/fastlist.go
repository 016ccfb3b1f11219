package schemas

import "encoding/json"

// PlainValidList reports whether a decoded feature list (encoding/json's
// types, with or without UseNumber) is certainly valid against
// feature-list.schema.json, checked in Go: the schema is small and flat,
// and the general validator takes most of grub status's time and a
// large part of a turn's on a list of 2,000 features. It only ever says
// yes to a document the schema accepts; whenever it is unsure (a
// version written "1.0", anything unusual) it says no and the schema
// decides, so every error is the schema's own. TestPlainValidListSchema
// fails when the schema changes, so that this check changes with it;
// FuzzPlainValidList compares the two.
func PlainValidList(v any) bool {
	doc, ok := v.(map[string]any)
	if !ok || len(doc) != 3 || !isOne(doc["version"]) { // version, goal and features, nothing else
		return false
	}
	if goal, ok := doc["goal"].(string); !ok || goal == "" {
		return false
	}
	features, ok := doc["features"].([]any)
	if !ok {
		return false
	}
	for _, f := range features {
		if !plainValidFeature(f) {
			return false
		}
	}
	return true
}

// isOne is the version the schema demands ("const": 1), written as 1.
func isOne(v any) bool {
	switch n := v.(type) {
	case json.Number:
		return n == "1"
	case float64:
		return n == 1
	}
	return false
}

func plainValidFeature(v any) bool {
	f, ok := v.(map[string]any)
	if !ok {
		return false
	}
	// The six keys checked below, verify if there, and nothing else.
	if _, there := f["verify"]; len(f) != 6 && !(there && len(f) == 7) {
		return false
	}
	if id, ok := f["id"].(string); !ok || !plainID(id) {
		return false
	}
	for _, k := range [...]string{"category", "description"} {
		if s, ok := f[k].(string); !ok || s == "" {
			return false
		}
	}
	steps, ok := f["steps"].([]any)
	if !ok {
		return false
	}
	for _, s := range steps {
		if str, ok := s.(string); !ok || str == "" {
			return false
		}
	}
	if verify, there := f["verify"]; there {
		if _, ok := verify.(string); !ok {
			return false
		}
	}
	if _, ok := f["passes"].(bool); !ok {
		return false
	}
	evidence, there := f["evidence"]
	if !there {
		return false
	}
	if _, ok := evidence.(string); !ok && evidence != nil {
		return false
	}
	return true
}

// plainID is the schema's id rule: ^[a-z0-9]+(-[a-z0-9]+)*$, at most 80
// characters (all ASCII, so bytes).
func plainID(id string) bool {
	if id == "" || len(id) > 80 || id[0] == '-' || id[len(id)-1] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && id[i-1] != '-':
		default:
			return false
		}
	}
	return true
}
