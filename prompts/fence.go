package prompts

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Untrusted text (the goal, the user's guidance and answers, the agent's
// earlier words, commands and their output) reaches a prompt byte-exact:
// a model copies commands and ids from the prompt, so nothing in them may
// be rewritten. Two things keep such text from passing for grub's own
// words:
//
//   - Fence and Code put it between runs of backticks longer than any run
//     inside it, so nothing in it can close the fence;
//   - NeutraliseTags breaks the few sequences that could close one of the
//     prompt's tagged blocks (</goal>, </previous-failure>, … any </name>
//     of a tag the templates use) or forge a decision (<loop-state>), by
//     adding one backslash after their "<": </goal> becomes <\/goal>.
//
// The prompts state that rule, so the model reads <\ there as <. Text
// without such a sequence is left exactly as it is.

// tagRE finds the closing tags the templates use.
var tagRE = regexp.MustCompile(`</([a-z][a-z0-9-]*)>`)

// openTag is the one opening tag untrusted text may not forge: the
// loop-state parser reads the last one in a message.
const openTag = "loop-state"

var (
	tagsOnce sync.Once
	tagNames []string // lower case, longest first
)

// TagNames returns the names of the tags grub's templates use (goal,
// previous-failure, loop-state, …): what NeutraliseTags guards.
func TagNames() []string {
	tagsOnce.Do(func() {
		set := map[string]bool{openTag: true}
		for _, locale := range Locales {
			entries, err := files.ReadDir("templates/" + locale)
			if err != nil {
				continue
			}
			for _, e := range entries {
				b, err := files.ReadFile("templates/" + locale + "/" + e.Name())
				if err != nil {
					continue
				}
				for _, m := range tagRE.FindAllStringSubmatch(string(b), -1) {
					set[m[1]] = true
				}
			}
		}
		for n := range set {
			tagNames = append(tagNames, n)
		}
		sort.Slice(tagNames, func(i, j int) bool {
			if len(tagNames[i]) != len(tagNames[j]) {
				return len(tagNames[i]) > len(tagNames[j])
			}
			return tagNames[i] < tagNames[j]
		})
	})
	return append([]string(nil), tagNames...)
}

// NeutraliseTags adds one backslash after the "<" of every sequence in s
// that could close one of grub's tags or open a loop-state block: "<",
// any backslashes, then "/" and a tag name, or "loop-state", in any case,
// followed by a character that cannot continue a name (or the end). So
// </goal> becomes <\/goal>, <loop-state> <\loop-state>, and <\/goal>
// <\\/goal>: the change can be undone by removing that one backslash.
// Everything else in s is kept byte for byte.
func NeutraliseTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	names := TagNames()
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '<' && isTagSequence(s[i+1:], names) {
			b.WriteString(s[last : i+1])
			b.WriteByte('\\')
			last = i + 1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isTagSequence reports whether rest, the text after a "<", makes that "<"
// the start of a guarded tag (see NeutraliseTags).
func isTagSequence(rest string, names []string) bool {
	rest = strings.TrimLeft(rest, `\`)
	closing := strings.HasPrefix(rest, "/")
	if closing {
		rest = rest[1:]
	}
	for _, n := range names {
		if !closing && n != openTag {
			continue
		}
		if len(rest) >= len(n) && strings.EqualFold(rest[:len(n)], n) &&
			(len(rest) == len(n) || !isNameByte(rest[len(n)])) {
			return true
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c == ':' || c == '.' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// longestRun is the length of the longest run of backticks in s.
func longestRun(s string) int {
	most, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			most = max(most, run)
		} else {
			run = 0
		}
	}
	return most
}

// Fence returns s, tags neutralised, as a fenced block: a line of at least
// three backticks, and more than the longest run of backticks in s, then
// s, then the same line. Nothing in s can close the fence.
func Fence(s string) string {
	s = NeutraliseTags(s)
	f := fenceFor(s)
	return f + "\n" + s + "\n" + f
}

// RestoreTags undoes NeutraliseTags: it removes the one backslash after
// the "<" of each sequence NeutraliseTags changed, and nothing else, so
// that RestoreTags(NeutraliseTags(s)) is s for every s. It is for reading
// back what grub showed (a test's model stub reads the goal so).
func RestoreTags(s string) string {
	if !strings.Contains(s, `<\`) {
		return s
	}
	names := TagNames()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == '<' && i+1 < len(s) && s[i+1] == '\\' && isTagSequence(s[i+2:], names) {
			i++
		}
	}
	return b.String()
}

// fenceFor returns the backtick line that fences s.
func fenceFor(s string) string { return strings.Repeat("`", max(3, longestRun(s)+1)) }

// Code returns s, tags neutralised, as an inline code span: between runs of
// backticks one longer than the longest run in s, with a space inside each
// run when s starts or ends with a backtick (Markdown's rule, so the span
// still reads as s). An empty s is an empty span.
func Code(s string) string {
	s = NeutraliseTags(s)
	ticks := strings.Repeat("`", longestRun(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}
