package main

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/grub-dev/grub/internal/cli"
)

const readmePath = "../../README.md"

// TestReadmeIsShort keeps the README a newcomer's page: detail belongs in
// a docs/ page (docs/index.md lists them).
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 250 {
		t.Errorf("README.md has %d lines; keep it at 250 or fewer and move the detail to a docs/ page", n)
	}
}

// readmeSnippets returns the README's code: every line of its code blocks
// and every inline code span.
func readmeSnippets(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock := false
	span := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			out = append(out, strings.TrimSpace(line))
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// helpOf returns grub's --help for the command path (nil: grub itself).
func helpOf(t *testing.T, path ...string) (string, bool) {
	t.Helper()
	ios, _, out, _ := cli.TestIOStreams()
	code := cli.Run(append(path, "--help"), ios)
	return out.String(), code == 0
}

// TestReadmeNamesRealCommands: every grub command the README's code
// names exists and takes the flags written with it, every flag it names
// on its own is a flag of some grub command, and every make target it
// names is in the Makefile.
func TestReadmeNamesRealCommands(t *testing.T) {
	root, ok := helpOf(t)
	if !ok {
		t.Fatal("grub --help failed")
	}
	commands := map[string]string{}
	list := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*) +\S`)
	_, available, _ := strings.Cut(root, "Available Commands:")
	available, _, _ = strings.Cut(available, "\n\n")
	for _, m := range list.FindAllStringSubmatch(available, -1) {
		help, ok := helpOf(t, m[1])
		if !ok {
			t.Fatalf("grub %s --help failed", m[1])
		}
		commands[m[1]] = help
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	flagIn := func(help, name string) bool {
		return regexp.MustCompile(`(?m)--` + regexp.QuoteMeta(name) + `\b`).MatchString(help)
	}
	checked := 0
	for _, s := range readmeSnippets(t) {
		s, _, _ = strings.Cut(s, "#")
		words := strings.Fields(s)
		if len(words) < 2 {
			continue
		}
		switch words[0] {
		case "grub":
			words = words[1:]
			if words[0] == "-C" && len(words) > 2 {
				words = words[2:]
			}
			name := words[0]
			if strings.HasSuffix(name, ":") || strings.HasPrefix(name, "-") {
				continue // a line grub prints, or a flag of grub itself
			}
			help, ok := commands[name]
			if !ok {
				t.Errorf("README names grub %s, which is not a grub command (%q)", name, s)
				continue
			}
			checked++
			for _, w := range words[1:] {
				w = strings.Trim(w, "[]")
				if f, ok := strings.CutPrefix(w, "--"); ok {
					f, _, _ = strings.Cut(f, "=")
					if !flagIn(help, f) {
						t.Errorf("README gives grub %s the flag --%s, which it does not take (%q)", name, f, s)
					}
				}
			}
		case "make":
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(words[1]) + `:`).Match(makefile) {
				t.Errorf("README names make %s, which the Makefile has no target for", words[1])
			}
			checked++
		}
	}
	for _, s := range readmeSnippets(t) {
		f, ok := strings.CutPrefix(strings.Fields(s + " x")[0], "--")
		if !ok {
			continue
		}
		f, _, _ = strings.Cut(f, "=")
		found := false
		for _, help := range commands {
			found = found || flagIn(help, f)
		}
		if !found {
			t.Errorf("README names --%s, which no grub command takes", f)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("checked only %d commands and flags of the README; is its code still in code blocks?", checked)
	}
}
