package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"text/template"
	"time"
)

// field is one parameter of a tool, read from a params struct field.
type field struct {
	index    int
	name     string // from the json tag
	desc     string // from the description tag
	required bool   // the json tag has no omitempty
	typ      reflect.Type
}

// fieldsOf lists the parameters of params struct type t, in declaration
// order. It panics on a field it cannot describe: params structs are part
// of the code, and a test builds every tool.
func fieldsOf(t reflect.Type) []field {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools: params type %s is not a struct", t))
	}
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			panic(fmt.Sprintf("tools: %s.%s has no json tag", t, sf.Name))
		}
		jsonType(sf.Type) // panics on an unsupported type
		out = append(out, field{
			index:    i,
			name:     name,
			desc:     sf.Tag.Get("description"),
			required: !slices.Contains(strings.Split(opts, ","), "omitempty"),
			typ:      sf.Type,
		})
	}
	return out
}

// jsonType is the JSON Schema type of a Go type a params struct may use.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "array"
		}
	}
	panic(fmt.Sprintf("tools: params field type %s is not supported (use string, int, bool or []string)", t))
}

// schemaFor generates the JSON Schema of params, a params struct: an object
// whose properties follow the struct's fields in order, typed from their Go
// types and described by their description tags; a field is required
// unless its json tag says omitempty; no other property is allowed. The
// output is deterministic, so tool definitions are byte-identical across
// requests.
func schemaFor(params any) json.RawMessage {
	fields := fieldsOf(reflect.TypeOf(params))
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, f.name)
		b.WriteString(`:{"type":`)
		typ := jsonType(f.typ)
		writeJSON(&b, typ)
		if typ == "array" {
			b.WriteString(`,"items":{"type":"string"}`)
		}
		if f.desc != "" {
			b.WriteString(`,"description":`)
			writeJSON(&b, f.desc)
		}
		b.WriteByte('}')
		if f.required {
			required = append(required, f.name)
		}
	}
	b.WriteString(`},"required":`)
	if required == nil {
		required = []string{}
	}
	writeJSON(&b, required)
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

// writeJSON appends the JSON encoding of v, which cannot fail for the
// strings and string slices it is given.
func writeJSON(b *bytes.Buffer, v any) {
	enc, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("tools: encode %v: %v", v, err))
	}
	b.Write(enc)
}

// decodeArgs decodes the model's JSON arguments into dst, a pointer to a
// params struct. Arguments that are not an object, an unknown or missing
// parameter and a value of the wrong type are model mistakes naming the
// parameter; empty arguments count as {}.
func decodeArgs(raw json.RawMessage, dst any) error {
	fields := fieldsOf(reflect.TypeOf(dst))
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return mistakef("the arguments are not a JSON object (%v); send an object with the parameters %s", err, paramList(fields))
	}
	known := make(map[string]bool, len(fields))
	for _, f := range fields {
		known[f.name] = true
	}
	var unknown []string
	for k := range obj {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return mistakef("unknown parameter %q; the parameters are %s", unknown[0], paramList(fields))
	}
	for _, f := range fields {
		if v, ok := obj[f.name]; f.required && (!ok || string(bytes.TrimSpace(v)) == "null") {
			return mistakef("missing required parameter %q (%s)", f.name, f.desc)
		}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return mistakef("parameter %q must be a JSON %s, not %s", te.Field, jsonTypeOfField(fields, te.Field), te.Value)
		}
		return mistakef("cannot decode the arguments: %v", err)
	}
	return nil
}

// paramList names the parameters for a message, required ones first as
// declared.
func paramList(fields []field) string {
	var parts []string
	for _, f := range fields {
		if f.required {
			parts = append(parts, f.name+" (required)")
		} else {
			parts = append(parts, f.name)
		}
	}
	return strings.Join(parts, ", ")
}

func jsonTypeOfField(fields []field, name string) string {
	for _, f := range fields {
		if f.name == name {
			return jsonType(f.typ)
		}
	}
	return "value of another type"
}

// descData is what a tool's description template may quote: the caps the
// code applies.
type descData struct {
	InlineLimit         int
	InlineLimitKiB      int
	ShellTimeout        string
	MaxShellTimeoutSecs int
	SpillCapMiB         int64
	MaxReadLines        int
	MaxLineChars        int
	MaxGrepMatches      int
	MaxGrepLineChars    int
	MaxEditMiB          int
	DefaultListDepth    int
	MaxListDepth        int
	MaxListEntries      int
	MaxGlobResults      int
}

// renderDescription renders a tool's embedded description template with
// the caps of cfg. A template that does not render is a bug in this
// package, caught by the tests, so it panics.
func renderDescription(name, text string, cfg Config) string {
	tmpl := template.Must(template.New(name).Option("missingkey=error").Parse(text))
	data := descData{
		InlineLimit:         cfg.InlineLimit,
		InlineLimitKiB:      cfg.InlineLimit >> 10,
		ShellTimeout:        FormatDuration(cfg.ShellTimeout),
		MaxShellTimeoutSecs: int(MaxShellTimeout / time.Second),
		SpillCapMiB:         cfg.SpillCap >> 20,
		MaxReadLines:        MaxReadLines,
		MaxLineChars:        MaxLineChars,
		MaxGrepMatches:      cfg.MaxGrepMatches,
		MaxGrepLineChars:    MaxGrepLineChars,
		MaxEditMiB:          MaxEditBytes >> 20,
		DefaultListDepth:    DefaultListDepth,
		MaxListDepth:        MaxListDepth,
		MaxListEntries:      MaxListEntries,
		MaxGlobResults:      MaxGlobResults,
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		panic(fmt.Sprintf("tools: render the description of %s: %v", name, err))
	}
	return strings.TrimSpace(b.String())
}

// FormatDuration writes d the way a person would, without zero units:
// "10m", "1h30m", "1m30s", "500ms". The backends use it too, for the
// timeouts their messages quote.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
