package cli

import (
	"errors"
	"strings"
)

// splitWords splits s into words as a POSIX shell splits a command line,
// without running anything: words are separated by blanks (space, tab,
// newline); 'single quotes' keep everything literally; "double quotes"
// keep everything but a backslash before $ ` " \ or a newline; outside
// quotes a backslash keeps the next character (a backslash-newline is
// removed). Nothing is expanded: $VAR, ~, globs and $(…) stay as written,
// and so do ; | & < >, which are plain characters here. An unbalanced
// quote or a trailing backslash is an error. An empty or blank s has no
// words (nil).
//
// grub uses it for --agent-args, so that a user can write what they would
// type after the program's name in a shell.
func splitWords(s string) ([]string, error) {
	var (
		words []string
		word  strings.Builder
		in    bool // inside a word (an empty quoted word counts)
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case ' ', '\t', '\n':
			if in {
				words = append(words, word.String())
				word.Reset()
				in = false
			}
		case '\\':
			i++
			switch {
			case i == len(rs):
				return nil, errors.New("it ends with a backslash that escapes nothing")
			case rs[i] != '\n':
				word.WriteRune(rs[i])
				in = true
			}
		case '\'':
			end := indexRune(rs, i+1, '\'')
			if end < 0 {
				return nil, errors.New("a single quote (') is not closed")
			}
			word.WriteString(string(rs[i+1 : end]))
			i, in = end, true
		case '"':
			i++
			for ; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune("$`\"\\\n", rs[i+1]) {
					i++
					if rs[i] == '\n' {
						continue
					}
				}
				word.WriteRune(rs[i])
			}
			if i == len(rs) {
				return nil, errors.New(`a double quote (") is not closed`)
			}
			in = true
		default:
			word.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, word.String())
	}
	return words, nil
}

// indexRune is the index of the first r in rs at or after from, or -1.
func indexRune(rs []rune, from int, r rune) int {
	for i := from; i < len(rs); i++ {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

// shellQuote writes words back as one shell word list that splitWords
// reads as the same words: plain words as they are, others in single
// quotes. It is how grub shows recorded --agent-args.
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@+%") == "" {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
