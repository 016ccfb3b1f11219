package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  \t\n ", nil},
		{"--permission-mode plan", []string{"--permission-mode", "plan"}},
		{"  -c   model_provider=local\t--full-auto\n", []string{"-c", "model_provider=local", "--full-auto"}},
		{`-c 'model_providers.local.base_url="http://127.0.0.1:8080/v1"'`, []string{"-c", `model_providers.local.base_url="http://127.0.0.1:8080/v1"`}},
		{`--append-system-prompt "say \"hi\" to \$USER"`, []string{"--append-system-prompt", `say "hi" to $USER`}},
		{`"a\b" "\\" "\x"`, []string{`a\b`, `\`, `\x`}},
		{`a\ b c\'d \"e\"`, []string{"a b", "c'd", `"e"`}},
		{`'' "" x`, []string{"", "", "x"}},
		{`pre'fix'"ed"post`, []string{"prefixedpost"}},
		{`'it''s'`, []string{"its"}},
		{`'a\b'`, []string{`a\b`}},
		{"a\\\nb", []string{"ab"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{`$HOME ~ *.go $(rm -rf x) ; | & > <`, []string{"$HOME", "~", "*.go", "$(rm", "-rf", "x)", ";", "|", "&", ">", "<"}},
		{"'multi\nline' 日本 \"é\"", []string{"multi\nline", "日本", "é"}},
	}
	for _, c := range cases {
		got, err := splitWords(c.in)
		if err != nil || !slices.Equal(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestSplitWordsErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`--x 'open`:    "single quote",
		`--x "open`:    "double quote",
		`"a\"`:         "double quote",
		`it's`:         "single quote",
		`trailing\`:    "backslash",
		`"ok" 'bad" x`: "single quote",
		`'ok' "bad' x`: "double quote",
		`"\\" "`:       "double quote",
	} {
		got, err := splitWords(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("splitWords(%q) = %q, %v; want an error about a %s", in, got, err, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	words := []string{"-c", "model_provider=local", "a b", "it's", "", `"$HOME"`, "x\ny"}
	got := shellQuote(words)
	if want := `-c model_provider=local 'a b' 'it'\''s' '' '"$HOME"' 'x` + "\n" + `y'`; got != want {
		t.Errorf("shellQuote = %s, want %s", got, want)
	}
	if back, err := splitWords(got); err != nil || !slices.Equal(back, words) {
		t.Errorf("splitWords(shellQuote(%q)) = %q, %v", words, back, err)
	}
}

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e" f\ g`, `'`, `"\`, "x\\\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := splitWords(s)
		if err != nil {
			return
		}
		// Quoting the words back splits into the same words.
		again, err := splitWords(shellQuote(words))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("%q: words %q, re-split %q (%v)", s, words, again, err)
		}
	})
}
