package featurelist

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// placeholderWords are whole-field texts that only ever stand in for real
// content. They are compared after trimming punctuation and brackets from
// both ends, folding case and collapsing inner white space.
var placeholderWords = map[string]bool{
	"todo":                    true,
	"tbd":                     true,
	"tba":                     true,
	"fixme":                   true,
	"xxx":                     true,
	"placeholder":             true,
	"lorem ipsum":             true,
	"example feature":         true,
	"description":             true,
	"feature description":     true,
	"feature id":              true,
	"feature-id":              true,
	"kebab-case-id":           true,
	"n/a":                     true,
	"insert description here": true,
	"your description here":   true,
	"describe the feature":    true,
}

// placeholderIDs are ids copied from a template rather than chosen.
var placeholderIDs = map[string]bool{
	"feature-id":      true,
	"kebab-case-id":   true,
	"example-feature": true,
	"your-feature-id": true,
	"placeholder":     true,
	"tbd":             true,
	"fixme":           true,
	"xxx":             true,
}

// markerRE finds an upper-case work marker used as a note: followed by a
// colon ("TODO: describe") or alone in brackets ("(TBD)", "[FIXME]").
var markerRE = regexp.MustCompile(`\b(?:TODO|TBD|FIXME|XXX)\b:|[(\[<{](?:TODO|TBD|FIXME|XXX)[)\]>}]`)

// placeholder reports whether s is placeholder text rather than real
// content. The rule, applied to s with surrounding white space trimmed
// (blank text is reported separately and is not placeholder text here):
//
//  1. s contains no letter or digit: "...", "…", "-", "<>", "???";
//  2. s is wholly one angle-bracket group, with no other '<' or '>' inside:
//     "<feature-id>", "<describe the step>"; or wholly one "{{ … }}" group;
//  3. s, with punctuation and brackets trimmed from both ends, case folded
//     and inner white space collapsed, is a stock placeholder: "TODO",
//     "TBD", "FIXME", "XXX", "placeholder", "lorem ipsum", "example
//     feature", "description", "feature id", "n/a", …;
//  4. s contains "lorem ipsum" in any case;
//  5. s contains the upper-case marker TODO, TBD, FIXME or XXX followed by
//     a colon or alone in brackets: "TODO: write steps", "Login (TBD)".
//
// Real text that merely contains angle brackets ("renders one <li> per
// item"), an ellipsis ("shows Loading..."), or the words todo or
// placeholder in a sentence ("the todo list shows a placeholder when
// empty") is not placeholder text.
func placeholder(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if !strings.ContainsFunc(s, isWordRune) {
		return true
	}
	if wholeGroup(s) {
		return true
	}
	core := strings.TrimFunc(s, func(r rune) bool { return !isWordRune(r) })
	core = strings.Join(strings.Fields(strings.ToLower(core)), " ")
	if placeholderWords[core] {
		return true
	}
	if strings.Contains(strings.ToLower(s), "lorem ipsum") {
		return true
	}
	return markerRE.MatchString(s)
}

// wholeGroup reports whether s is one "<…>" group or one "{{…}}" group.
func wholeGroup(s string) bool {
	if len(s) >= 2 && s[0] == '<' && s[len(s)-1] == '>' {
		inner := s[1 : len(s)-1]
		return !strings.ContainsAny(inner, "<>")
	}
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && len(s) >= 4 {
		return !strings.Contains(s[2:len(s)-2], "}}")
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// quote shows a field value in a message: quoted, and cut to a length a
// prompt can afford.
func quote(s string) string {
	const max = 60
	r := []rune(s)
	if len(r) > max {
		s = string(r[:max]) + "…"
	}
	return strconv.Quote(s)
}
