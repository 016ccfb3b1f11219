package loopstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/grub-dev/grub/schemas"
)

// The tags around a decision.
const (
	OpenTag  = "<loop-state>"
	CloseTag = "</loop-state>"
)

// Template is the format of a decision as prompts and error messages show
// it. Its values are placeholders that Parse rejects, so an agent that
// echoes it does not produce a decision.
const Template = `<loop-state>{"status":"<continue|complete|blocked>","summary":"<one-line summary of this turn>","nextStep":"<what the next turn should do>","feature":"<feature-id>"}</loop-state>`

// fileName names the block in schema errors.
const fileName = "<loop-state>"

// Kind classifies why a message carries no usable decision.
type Kind string

// The kinds of Error.
const (
	KindMissing     Kind = "missing"      // no <loop-state> block at all
	KindUnclosed    Kind = "unclosed"     // the last <loop-state> has no </loop-state> after it
	KindEmpty       Kind = "empty"        // the last block holds nothing but white space (and a fence)
	KindInvalidJSON Kind = "invalid-json" // the block is not one JSON value
	KindSchema      Kind = "schema"       // the JSON breaks schemas/loop-state.schema.json
	KindPlaceholder Kind = "placeholder"  // the JSON holds template placeholders echoed from a prompt
)

// Error is a final message without a usable decision. Its text is shown to
// the model in the next prompt, so it says what is wrong and what to write.
type Error struct {
	Kind   Kind
	Detail string // what exactly is wrong, naming the field where there is one
}

func (e *Error) Error() string {
	switch e.Kind {
	case KindMissing:
		detail := ""
		if e.Detail != "" {
			detail = " (" + e.Detail + ")"
		}
		return "your final message has no " + OpenTag + " block" + detail + "; end it with one, filled in with real values, in this format: " + Template
	case KindUnclosed:
		return "the last " + OpenTag + " block in your final message is not closed; end the message with " + OpenTag + "{…decision JSON…}" + CloseTag + ", closing tag included"
	case KindEmpty:
		return "the last " + OpenTag + " block in your final message is empty; put the decision JSON between the tags, in this format: " + Template
	case KindInvalidJSON:
		return "the last " + OpenTag + " block does not hold valid JSON (" + e.Detail + "); write exactly one JSON object with double-quoted keys and strings and no trailing commas, in this format: " + Template
	case KindSchema:
		return "the " + OpenTag + " decision is invalid: " + e.Detail
	case KindPlaceholder:
		return "the " + OpenTag + " decision still holds template placeholders (" + e.Detail + "); replace every <…> placeholder with your real status, summary and next step"
	}
	return "loop-state: " + string(e.Kind) + ": " + e.Detail
}

// Parse extracts the agent's decision from its final message. Only the last
// <loop-state> opening tag counts, with the first </loop-state> after it;
// text after the block is allowed. Inside the block, white space and a
// Markdown fence (```json or a bare ```) around the JSON are tolerated. The
// JSON must pass schemas.LoopState; unknown fields are ignored. A decision
// whose values are template placeholders (see placeholder) is refused, so
// an agent echoing the prompt's format does not produce a decision.
//
// Every failure is an *Error. The tags may not appear inside the JSON
// itself. String fields of the returned Decision are trimmed of surrounding
// white space.
func Parse(message string) (Decision, error) {
	body, err := extract(message)
	if err != nil {
		return Decision{}, err
	}
	body = unfence(body)
	if body == "" {
		return Decision{}, &Error{Kind: KindEmpty}
	}
	verr := schemas.Validate(schemas.LoopState, fileName, []byte(body))
	var se *schemas.Error
	if errors.As(verr, &se) && se.Syntax != nil {
		return Decision{}, &Error{Kind: KindInvalidJSON, Detail: se.Syntax.Error()}
	}
	if verr != nil && se == nil {
		// The schema itself failed to load: not the agent's fault, but the
		// decision cannot be checked, so it cannot be accepted either.
		return Decision{}, &Error{Kind: KindSchema, Detail: verr.Error()}
	}
	// Read as strictly as Validate read it: a key twice or in two cases
	// is refused here, before anything reads the keys.
	doc, err := schemas.DecodeJSON(fileName, []byte(body))
	if err != nil {
		return Decision{}, &Error{Kind: KindSchema, Detail: err.Error()}
	}
	obj, isObject := doc.(map[string]any)
	if isObject {
		if d := placeholderFields(obj); d != "" {
			return Decision{}, &Error{Kind: KindPlaceholder, Detail: d}
		}
	}
	if verr != nil {
		return Decision{}, &Error{Kind: KindSchema, Detail: schemaDetail(obj, isObject, se)}
	}
	return decision(obj), nil
}

// decision builds a Decision from a decoded object that passed the schema.
// It reads exactly the keys the schema checked: encoding/json would also
// match keys that differ in case ("Status"), letting a block say one thing
// to the schema and another to grub.
func decision(obj map[string]any) Decision {
	str := func(k string) string {
		s, _ := obj[k].(string)
		return strings.TrimSpace(s)
	}
	d := Decision{
		Status:   Status(str("status")),
		Summary:  str("summary"),
		NextStep: str("nextStep"),
		Feature:  str("feature"),
		Blocker:  str("blocker"),
		Question: str("question"),
	}
	if opts, ok := obj["options"].([]any); ok {
		d.Options = make([]string, 0, len(opts))
		for _, o := range opts {
			s, _ := o.(string)
			d.Options = append(d.Options, strings.TrimSpace(s))
		}
	}
	return d
}

// extract returns the text between the last opening tag and the first
// closing tag after it.
func extract(message string) (string, error) {
	open := strings.LastIndex(message, OpenTag)
	if open < 0 {
		if strings.Contains(message, CloseTag) {
			return "", &Error{Kind: KindMissing, Detail: "there is a closing " + CloseTag + " tag but no opening " + OpenTag + " tag"}
		}
		return "", &Error{Kind: KindMissing}
	}
	rest := message[open+len(OpenTag):]
	end := strings.Index(rest, CloseTag)
	if end < 0 {
		return "", &Error{Kind: KindUnclosed}
	}
	return rest[:end], nil
}

// unfence trims white space and one Markdown code fence around s. The
// opening fence may carry a language word (```json); a missing closing
// fence is tolerated.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimLeft(s[3:], "`")
	s = strings.TrimLeftFunc(s, func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '+' || r == '.'
	})
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "```") {
		s = strings.TrimRight(s, "`")
	}
	return strings.TrimSpace(s)
}

// The decision's string fields, in the order errors name them.
var stringFields = []string{"status", "summary", "nextStep", "feature", "blocker", "question"}

var altGroupRE = regexp.MustCompile(`<[^<>]*\|[^<>]*>`)

// placeholder reports whether a decision value is template text rather than
// a real value. The rule, on the value with surrounding white space
// trimmed: it is non-empty and (1) has no letter or digit ("…", "..."), or
// (2) is wholly one angle-bracket group ("<one-line summary>",
// "<feature-id>"), or (3) contains an angle-bracket group listing
// alternatives with "|" ("<continue|complete|blocked>"). Text that merely
// mentions a tag ("fixed the <form> markup") is a real value.
func placeholder(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return false
	}
	if !strings.ContainsFunc(v, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return true
	}
	if len(v) >= 2 && v[0] == '<' && v[len(v)-1] == '>' && !strings.ContainsAny(v[1:len(v)-1], "<>") {
		return true
	}
	return altGroupRE.MatchString(v)
}

// placeholderFields names the fields of obj that hold placeholders, or
// returns "".
func placeholderFields(obj map[string]any) string {
	var found []string
	for _, k := range stringFields {
		if s, ok := obj[k].(string); ok && placeholder(s) {
			found = append(found, fmt.Sprintf("`%s` is %q", k, s))
		}
	}
	if opts, ok := obj["options"].([]any); ok {
		for i, o := range opts {
			if s, ok := o.(string); ok && placeholder(s) {
				found = append(found, fmt.Sprintf("`options[%d]` is %q", i, s))
			}
		}
	}
	return strings.Join(found, ", ")
}

// schemaDetail explains, field by field and with what to write, why a
// decision fails the schema. It falls back to the schema's own words for
// anything it does not recognise.
func schemaDetail(obj map[string]any, isObject bool, se *schemas.Error) string {
	if !isObject {
		return "the block must hold one JSON object, e.g. " + Template
	}
	var out []string
	raw, statusIsString := obj["status"].(string)
	status := Status(raw)
	switch {
	case !hasKey(obj, "status"):
		out = append(out, "`status` is missing; set it to continue, complete or blocked")
	case !statusIsString || !status.Reported():
		out = append(out, fmt.Sprintf("`status` is %s; set it to continue, complete or blocked", show(obj["status"])))
	}
	textField := func(name, what string) {
		v, present := obj[name]
		s, isString := v.(string)
		switch {
		case !present:
			out = append(out, fmt.Sprintf("`%s` is missing; %s", name, what))
		case !isString:
			out = append(out, fmt.Sprintf("`%s` is %s, not a string; %s", name, show(v), what))
		case strings.TrimSpace(s) == "":
			out = append(out, fmt.Sprintf("`%s` is blank; %s", name, what))
		}
	}
	textField("summary", "write one line on what this turn did")
	if status == Continue {
		textField("nextStep", "it is required when status is continue: say what the next turn should do")
	}
	if status == Blocked {
		textField("blocker", "it is required when status is blocked: say what stops you and what you tried")
	}
	for _, name := range []string{"nextStep", "blocker", "question"} {
		if status == Continue && name == "nextStep" || status == Blocked && name == "blocker" {
			continue
		}
		if v, present := obj[name]; present {
			if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
				out = append(out, fmt.Sprintf("`%s` is %s; give it text or leave it out", name, show(v)))
			}
		}
	}
	if v, present := obj["feature"]; present {
		if _, ok := v.(string); !ok {
			out = append(out, fmt.Sprintf("`feature` is %s; give the feature id as a string", show(v)))
		}
	}
	if v, present := obj["options"]; present {
		arr, ok := v.([]any)
		allStrings := ok
		for _, o := range arr {
			if _, isStr := o.(string); !isStr {
				allStrings = false
			}
		}
		if !allStrings {
			out = append(out, "`options` must be an array of strings")
		}
	}
	if len(out) == 0 {
		return se.Error()
	}
	return strings.Join(out, "; ")
}

func hasKey(obj map[string]any, k string) bool {
	_, ok := obj[k]
	return ok
}

// show renders a JSON value for a message.
func show(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		b = append(bytes.Clone(b[:60]), "…"...)
	}
	return string(b)
}
