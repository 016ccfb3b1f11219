package loopstate

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// parseCase is one final message and what Parse must make of it.
type parseCase struct {
	name    string
	message string
	want    Decision
	kind    Kind     // "" means success
	errHas  []string // substrings of the error text
}

// loginForm is the decision of the continue blocks in parseOKCases.
var loginForm = Decision{Status: Continue, Summary: "added the login form", NextStep: "wire the OAuth callback", Feature: "login-form"}

// parseOKCases are messages whose decision Parse finds.
var parseOKCases = []parseCase{
	{
		name:    "plain block",
		message: "Done.\n<loop-state>{\"status\":\"continue\",\"summary\":\"added the login form\",\"nextStep\":\"wire the OAuth callback\",\"feature\":\"login-form\"}</loop-state>",
		want:    loginForm,
	},
	{
		name:    "white space and padded values",
		message: "<loop-state>\n\n  {\"status\":\"complete\",\"summary\":\"  all done \"}  \n</loop-state>\n",
		want:    Decision{Status: Complete, Summary: "all done"},
	},
	{
		name:    "json fence",
		message: "<loop-state>\n```json\n{\"status\":\"complete\",\"summary\":\"all features pass\"}\n```\n</loop-state>",
		want:    Decision{Status: Complete, Summary: "all features pass"},
	},
	{
		name:    "fence without language",
		message: "<loop-state>\n```\n{\"status\":\"complete\",\"summary\":\"ok\"}\n```\n</loop-state>",
		want:    Decision{Status: Complete, Summary: "ok"},
	},
	{
		name:    "fence on one line",
		message: "<loop-state>```json {\"status\":\"complete\",\"summary\":\"ok\"} ```</loop-state>",
		want:    Decision{Status: Complete, Summary: "ok"},
	},
	{
		name:    "fence never closed",
		message: "<loop-state>\n```json\n{\"status\":\"complete\",\"summary\":\"ok\"}\n</loop-state>",
		want:    Decision{Status: Complete, Summary: "ok"},
	},
	{
		name: "two blocks: the last one counts",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"draft\"}</loop-state>\nActually not yet.\n" +
			"<loop-state>{\"status\":\"continue\",\"summary\":\"added the login form\",\"nextStep\":\"wire the OAuth callback\",\"feature\":\"login-form\"}</loop-state>",
		want: loginForm,
	},
	{
		name: "echoed template then a real block",
		message: "The format is " + Template + "\nHere is mine:\n" +
			"<loop-state>{\"status\":\"continue\",\"summary\":\"added the login form\",\"nextStep\":\"wire the OAuth callback\",\"feature\":\"login-form\"}</loop-state>",
		want: loginForm,
	},
	{
		name: "an invalid earlier block does not matter",
		message: "<loop-state>{oops</loop-state>\n" +
			"<loop-state>{\"status\":\"complete\",\"summary\":\"ok\"}</loop-state>",
		want: Decision{Status: Complete, Summary: "ok"},
	},
	{
		name:    "trailing text after the block",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"ok\"}</loop-state>\n\nThanks for reading!",
		want:    Decision{Status: Complete, Summary: "ok"},
	},
	{
		name:    "unknown fields ignored",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"ok\",\"confidence\":0.9,\"notes\":{\"a\":[1]}}</loop-state>",
		want:    Decision{Status: Complete, Summary: "ok"},
	},
	{
		name:    "blocked with question and options",
		message: "<loop-state>{\"status\":\"blocked\",\"summary\":\"need a key\",\"blocker\":\"no OAuth client secret\",\"question\":\"Which provider?\",\"options\":[\"GitHub\",\"Google\"]}</loop-state>",
		want:    Decision{Status: Blocked, Summary: "need a key", Blocker: "no OAuth client secret", Question: "Which provider?", Options: []string{"GitHub", "Google"}},
	},
	{
		name:    "nested opening tags: the innermost block counts",
		message: "<loop-state><loop-state>{\"status\":\"complete\",\"summary\":\"ok\"}</loop-state></loop-state>",
		want:    Decision{Status: Complete, Summary: "ok"},
	},
	{
		name:    "real text with angle brackets",
		message: "<loop-state>{\"status\":\"continue\",\"summary\":\"fixed the <form> markup\",\"nextStep\":\"style <input> fields\"}</loop-state>",
		want:    Decision{Status: Continue, Summary: "fixed the <form> markup", NextStep: "style <input> fields"},
	},
}

// parseErrorCases are messages Parse rejects, with the kind of error and
// what the error tells the agent.
var parseErrorCases = []parseCase{
	{
		name:    "missing",
		message: "I finished the feature and everything works.",
		kind:    KindMissing,
		errHas:  []string{"your final message has no <loop-state> block; end it with", Template},
	},
	{
		name:    "empty message",
		message: "",
		kind:    KindMissing,
	},
	{
		name:    "closing tag only",
		message: "{\"status\":\"complete\",\"summary\":\"ok\"}</loop-state>",
		kind:    KindMissing,
		errHas:  []string{"closing </loop-state> tag but no opening <loop-state> tag"},
	},
	{
		name:    "unclosed",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"ok\"}",
		kind:    KindUnclosed,
		errHas:  []string{"is not closed", "closing tag included"},
	},
	{
		name:    "complete block followed by a stray opening tag",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"ok\"}</loop-state> and then <loop-state>",
		kind:    KindUnclosed,
	},
	{
		name:    "empty block",
		message: "<loop-state>  \n </loop-state>",
		kind:    KindEmpty,
		errHas:  []string{"is empty; put the decision JSON between the tags"},
	},
	{
		name:    "empty fence",
		message: "<loop-state>\n```json\n```\n</loop-state>",
		kind:    KindEmpty,
	},
	{
		name:    "bad json",
		message: "<loop-state>{status: continue, summary: 'x',}</loop-state>",
		kind:    KindInvalidJSON,
		errHas:  []string{"does not hold valid JSON (", "double-quoted keys"},
	},
	{
		name:    "two JSON objects",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"a\"}{\"status\":\"complete\",\"summary\":\"b\"}</loop-state>",
		kind:    KindInvalidJSON,
		errHas:  []string{"trailing data"},
	},
	{
		// Read strictly, as every JSON document from outside is
		// (schemas.DecodeJSON): a key twice or in two cases is refused.
		name:    "keys differing in case",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"ok\",\"Status\":\"blocked\",\"SUMMARY\":\"no\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"at /Status", "differ only in case"},
	},
	{
		name:    "a key twice",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"ok\",\"status\":\"blocked\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"at /status", "appears twice"},
	},
	{
		name:    "not an object",
		message: "<loop-state>[\"complete\"]</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"must hold one JSON object"},
	},
	{
		name:    "wrong status",
		message: "<loop-state>{\"status\":\"done\",\"summary\":\"ok\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`status` is \"done\"; set it to continue, complete or blocked"},
	},
	{
		name:    "status missing",
		message: "<loop-state>{\"summary\":\"ok\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`status` is missing"},
	},
	{
		name:    "status not a string",
		message: "<loop-state>{\"status\":1,\"summary\":\"ok\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`status` is 1;"},
	},
	{
		name:    "missing nextStep",
		message: "<loop-state>{\"status\":\"continue\",\"summary\":\"ok\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`nextStep` is missing; it is required when status is continue"},
	},
	{
		name:    "blank nextStep",
		message: "<loop-state>{\"status\":\"continue\",\"summary\":\"ok\",\"nextStep\":\" \"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`nextStep` is blank"},
	},
	{
		name:    "missing blocker",
		message: "<loop-state>{\"status\":\"blocked\",\"summary\":\"stuck\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`blocker` is missing; it is required when status is blocked"},
	},
	{
		name:    "blank summary",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"   \"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`summary` is blank; write one line"},
	},
	{
		name:    "summary missing and status wrong",
		message: "<loop-state>{\"status\":\"finished\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`status` is \"finished\"", "`summary` is missing"},
	},
	{
		name:    "options not strings",
		message: "<loop-state>{\"status\":\"blocked\",\"summary\":\"s\",\"blocker\":\"b\",\"options\":[1,2]}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`options` must be an array of strings"},
	},
	{
		name:    "blank question",
		message: "<loop-state>{\"status\":\"blocked\",\"summary\":\"s\",\"blocker\":\"b\",\"question\":\"\"}</loop-state>",
		kind:    KindSchema,
		errHas:  []string{"`question` is \"\"; give it text or leave it out"},
	},
	{
		name:    "template echoed",
		message: Template,
		kind:    KindPlaceholder,
		errHas:  []string{"`status` is \"<continue|complete|blocked>\"", "`summary` is \"<one-line summary of this turn>\"", "replace every <…> placeholder"},
	},
	{
		name:    "placeholder summary in an otherwise valid decision",
		message: "<loop-state>{\"status\":\"complete\",\"summary\":\"<one-line summary>\"}</loop-state>",
		kind:    KindPlaceholder,
		errHas:  []string{"`summary` is \"<one-line summary>\""},
	},
	{
		name:    "ellipsis values",
		message: "<loop-state>{\"status\":\"continue\",\"summary\":\"…\",\"nextStep\":\"...\",\"feature\":\"feature-id\"}</loop-state>",
		kind:    KindPlaceholder,
		errHas:  []string{"`summary` is \"…\"", "`nextStep` is \"...\""},
	},
	{
		name:    "alternatives inside a longer value",
		message: "<loop-state>{\"status\":\"blocked\",\"summary\":\"s\",\"blocker\":\"b\",\"question\":\"pick <yes|no>\"}</loop-state>",
		kind:    KindPlaceholder,
		errHas:  []string{"`question`"},
	},
	{
		name:    "placeholder feature",
		message: "<loop-state>{\"status\":\"continue\",\"summary\":\"did x\",\"nextStep\":\"do y\",\"feature\":\"<feature-id>\"}</loop-state>",
		kind:    KindPlaceholder,
		errHas:  []string{"`feature` is \"<feature-id>\""},
	},
	{
		name:    "placeholder option",
		message: "<loop-state>{\"status\":\"blocked\",\"summary\":\"s\",\"blocker\":\"b\",\"question\":\"q?\",\"options\":[\"a\",\"<option>\"]}</loop-state>",
		kind:    KindPlaceholder,
		errHas:  []string{"`options[1]` is \"<option>\""},
	},
}

func TestParse(t *testing.T) {
	for _, c := range slices.Concat(parseOKCases, parseErrorCases) {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.message)
			if c.kind == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("Parse = %+v, want %+v", got, c.want)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v (decision %+v), want *Error of kind %s", err, got, c.kind)
			}
			if pe.Kind != c.kind {
				t.Fatalf("kind = %s, want %s (%v)", pe.Kind, c.kind, err)
			}
			if !reflect.DeepEqual(got, Decision{}) {
				t.Errorf("a failed Parse returned a decision: %+v", got)
			}
			for _, w := range c.errHas {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestPlaceholder(t *testing.T) {
	yes := []string{"…", "...", "-", "<one-line summary>", "<feature-id>", "<continue|complete|blocked>",
		"status: <continue|complete>", " <x> ", "<>"}
	no := []string{"", "  ", "done", "fixed the <form> markup", "a <b>bold</b> move", "use a|b pipes",
		"x < y and y > z", "login-form"}
	for _, s := range yes {
		if !placeholder(s) {
			t.Errorf("placeholder(%q) = false, want true", s)
		}
	}
	for _, s := range no {
		if placeholder(s) {
			t.Errorf("placeholder(%q) = true, want false", s)
		}
	}
}

func TestErrorMessagesSayWhatToDo(t *testing.T) {
	for _, k := range []Kind{KindMissing, KindUnclosed, KindEmpty, KindInvalidJSON, KindSchema, KindPlaceholder} {
		msg := (&Error{Kind: k, Detail: "detail"}).Error()
		if !strings.Contains(msg, "<loop-state>") {
			t.Errorf("%s: message %q does not name the block", k, msg)
		}
		if k != KindUnclosed && k != KindEmpty && !strings.Contains(msg, "detail") {
			t.Errorf("%s: message %q drops the detail", k, msg)
		}
	}
}
