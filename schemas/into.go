package schemas

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// DecodeInto is Decode for a document grub reads into a Go value (v, a
// pointer): besides what Decode refuses, every object key must be the
// exact JSON name of a field of the struct it fills. encoding/json would
// fill a field from a key that differs in case ("ID" for "id") and drop a
// key it does not know, so a key the schema lets through unchecked, or
// does not know at all, could reach grub unchecked. A refused key is a
// *Error naming the file, the key's JSON pointer and what to write.
func DecodeInto(name, file string, data []byte, v any) error {
	doc, err := Decode(name, file, data)
	if err != nil {
		return err
	}
	var out []Violation
	fieldsMatch(doc, reflect.TypeOf(v), "", &out)
	if len(out) > 0 {
		return &Error{File: file, Schema: name, Violations: out}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &Error{File: file, Schema: name, Syntax: err}
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// fieldsMatch checks doc's keys against type t, as encoding/json would
// decode doc into a t, adding a violation for every key of an object
// decoded into a struct that is not one of its fields' names. A type
// that decodes itself (time.Time) is not looked into.
func fieldsMatch(doc any, t reflect.Type, ptr string, out *[]Violation) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t, nil)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			at := ptr + "/" + escapeToken(k)
			ft, ok := fields[k]
			if ok {
				fieldsMatch(obj[k], ft, at, out)
				continue
			}
			rule := fmt.Sprintf("unknown key %s: grub writes no such key here; remove it", strconv.Quote(k))
			for name := range fields {
				if strings.EqualFold(name, k) {
					rule = fmt.Sprintf("unknown key %s; keys are case-sensitive: write %s", strconv.Quote(k), strconv.Quote(name))
				}
			}
			*out = append(*out, Violation{Pointer: at, Rule: rule})
		}
	case reflect.Slice, reflect.Array:
		items, _ := doc.([]any)
		for i, it := range items {
			fieldsMatch(it, t.Elem(), ptr+"/"+strconv.Itoa(i), out)
		}
	case reflect.Map:
		obj, _ := doc.(map[string]any)
		for k, it := range obj {
			fieldsMatch(it, t.Elem(), ptr+"/"+escapeToken(k), out)
		}
	}
}

// jsonFields adds to m (made when nil) the JSON names of t's fields, as
// encoding/json names them: the tag's name, else the field's; "-" is
// no field; an untagged embedded struct's fields are t's own.
func jsonFields(t reflect.Type, m map[string]reflect.Type) map[string]reflect.Type {
	if m == nil {
		m = map[string]reflect.Type{}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			jsonFields(ft, m)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}
