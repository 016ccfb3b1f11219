package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The documents grub validates. Each name is a file in this folder.
const (
	FeatureList  = "feature-list.schema.json"
	State        = "state.schema.json"
	LoopState    = "loop-state.schema.json"
	Control      = "control.schema.json"
	StatusOutput = "status-output.schema.json"
	ListOutput   = "list-output.schema.json"
	// HistoryOutput is the --json output of grub history.
	HistoryOutput = "history-output.schema.json"
	// ConfigOutput is the --json output of grub config.
	ConfigOutput = "config-output.schema.json"
	// ErrorOutput is what a --json command (grub status, grub doctor)
	// prints on stdout when it fails.
	ErrorOutput = "error-output.schema.json"
	// DoctorOutput is the --json output of grub doctor.
	DoctorOutput = "doctor-output.schema.json"
	// TurnLedger is one line of a task's turns.jsonl.
	TurnLedger = "turn-ledger.schema.json"
	// ReportOutput is the --format json output of grub report.
	ReportOutput = "report-output.schema.json"
	// VersionOutput is the --json output of grub version.
	VersionOutput = "version-output.schema.json"
	// Events is one line of grub start --json (resume, answer): one event
	// of a run (package events).
	Events = "events.schema.json"
)

//go:embed *.schema.json
var files embed.FS

const baseURL = "https://grub.dev/schemas/"

var (
	loadOnce sync.Once
	compiler *jsonschema.Compiler // every schema added, each compiled when first used
	loadErr  error

	compileMu sync.Mutex
	compiled  = map[string]*jsonschema.Schema{}
)

// load adds every embedded schema to one compiler. Schemas are compiled
// when first used (schema), so that a command pays only for the few it
// checks: compiling all of them is most of what a short grub command costs.
func load() {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	entries, err := files.ReadDir(".")
	if err != nil {
		loadErr = err
		return
	}
	for _, e := range entries {
		data, err := files.ReadFile(e.Name())
		if err != nil {
			loadErr = err
			return
		}
		if err := c.AddResource(baseURL+e.Name(), bytes.NewReader(data)); err != nil {
			loadErr = fmt.Errorf("schema %s: %w", e.Name(), err)
			return
		}
	}
	compiler = c
}

func schema(name string) (*jsonschema.Schema, error) {
	loadOnce.Do(load)
	if loadErr != nil {
		return nil, loadErr
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	if _, err := files.ReadFile(name); err != nil {
		return nil, fmt.Errorf("schemas: no schema named %q", name)
	}
	s, err := compiler.Compile(baseURL + name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	compiled[name] = s
	return s, nil
}

// Names lists the embedded schema files that compile.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		if _, err := schema(e.Name()); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// Violation is one rule a document breaks.
type Violation struct {
	Pointer string // JSON pointer into the document, "" for the root
	Rule    string // what the schema demands, in words
}

// Error is a document that is not valid JSON or breaks its schema. It names
// the file, and for a schema failure the JSON pointer and rule of every leaf
// violation.
type Error struct {
	File       string // the file as the user knows it, e.g. ".grub/0a1b2c3d/state.json"
	Schema     string // the schema's file name
	Syntax     error  // set when the document is not JSON at all
	Violations []Violation
}

func (e *Error) Error() string {
	if e.Syntax != nil {
		return fmt.Sprintf("%s: not valid JSON: %v", e.File, e.Syntax)
	}
	var b strings.Builder
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString("; ")
		}
		ptr := v.Pointer
		if ptr == "" {
			ptr = "/"
		}
		fmt.Fprintf(&b, "%s at %s: %s", e.File, ptr, v.Rule)
	}
	return b.String()
}

// Validate checks data against the named schema. file names the document in
// error messages. It returns a *Error for a bad document and a plain error
// only when the schema itself cannot be loaded.
func Validate(name, file string, data []byte) error {
	_, err := Decode(name, file, data)
	return err
}

// Decode is Validate that also returns the document, decoded with
// encoding/json's UseNumber, so that a caller need not parse it again.
// The document is read strictly (DecodeJSON, strict.go).
func Decode(name, file string, data []byte) (any, error) {
	doc, err := DecodeJSON(file, data)
	if err != nil {
		if se, ok := err.(*Error); ok {
			se.Schema = name
		}
		return nil, err
	}
	if err := ValidateValue(name, file, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// ValidateValue checks an already decoded JSON value (as produced by
// encoding/json with UseNumber, or plain float64 numbers). A feature
// list, alone or as a state's baseline, that PlainValidList finds valid
// is not checked against the schema again.
func ValidateValue(name, file string, doc any) error {
	s, err := schema(name)
	if err != nil {
		return err
	}
	switch name {
	case FeatureList:
		if PlainValidList(doc) {
			return nil
		}
	case State:
		if m, ok := doc.(map[string]any); ok && m[baselineKey] != nil && PlainValidList(m[baselineKey]) {
			doc = withoutBaseline(m)
		}
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", file, err)
	}
	out := &Error{File: file, Schema: name}
	collectLeaves(ve, doc, &out.Violations)
	if len(out.Violations) == 0 {
		out.Violations = []Violation{{Pointer: ve.InstanceLocation, Rule: ve.Message}}
	}
	return out
}

// ValidateGo marshals v and checks it against the named schema: the check
// grub runs before every write.
func ValidateGo(name, file string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return Validate(name, file, data)
}

// baselineKey is the accepted feature list in state files written before
// accepted-list.json, which holds it now; the schema allows null or a
// feature list there.
const baselineKey = "featureListBaseline"

// withoutBaseline is a state document with its baseline null: a shallow
// copy, doc itself is left alone.
func withoutBaseline(doc map[string]any) map[string]any {
	c := make(map[string]any, len(doc))
	for k, v := range doc {
		c[k] = v
	}
	c[baselineKey] = nil
	return c
}

func collectLeaves(ve *jsonschema.ValidationError, doc any, out *[]Violation) {
	if len(ve.Causes) == 0 {
		vs := unknownKeys(ve, doc)
		if vs == nil {
			vs = []Violation{{Pointer: ve.InstanceLocation, Rule: ve.Message}}
		}
		for _, v := range vs {
			if !slices.Contains(*out, v) {
				*out = append(*out, v)
			}
		}
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, doc, out)
	}
}

// unknownKeys words an additionalProperties failure as one violation per
// key the object may not have, at the key's own pointer, naming the keys
// it may have; nil when ve is another failure (or the keys cannot be
// found: then the validator's message stands).
func unknownKeys(ve *jsonschema.ValidationError, doc any) []Violation {
	loc, ok := strings.CutSuffix(ve.AbsoluteKeywordLocation, "/additionalProperties")
	if !ok {
		return nil
	}
	compileMu.Lock()
	s, err := compiler.Compile(loc)
	compileMu.Unlock()
	obj, isObj := at(doc, ve.InstanceLocation).(map[string]any)
	if err != nil || !isObj || len(s.PatternProperties) > 0 {
		return nil
	}
	known := slices.Sorted(maps.Keys(s.Properties))
	var out []Violation
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if s.Properties[k] != nil {
			continue
		}
		rule := fmt.Sprintf("unknown key %s; remove it (the keys here are %s)", strconv.Quote(k), strings.Join(known, ", "))
		for _, name := range known {
			if strings.EqualFold(name, k) {
				rule = fmt.Sprintf("unknown key %s; keys are case-sensitive: write %s", strconv.Quote(k), strconv.Quote(name))
			}
		}
		out = append(out, Violation{Pointer: ve.InstanceLocation + "/" + escapeToken(k), Rule: rule})
	}
	return out
}

// at is the value at a JSON pointer in doc, or nil.
func at(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := doc.(type) {
		case map[string]any:
			doc = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			doc = x[i]
		default:
			return nil
		}
	}
	return doc
}
