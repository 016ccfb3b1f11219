package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// The command reference: docs/cli/*.md (committed, kept in step by
// TestCLIDocsUpToDate; make docs writes it) and the man pages (make man,
// not committed; the release archives carry them). Both are generated from
// the command tree grub runs, with the hidden commands left out, through
// cobra's doc package; internal/cli/gendocs is the program make runs.

// docsHeader opens every generated Markdown page.
const docsHeader = "<!-- Generated from grub's commands by `make docs`; do not edit. -->\n\n"

// docsRoot builds the command tree as grub runs it, on a factory that
// reads nothing from the environment, so that the pages are the same on
// every machine. The completion command and --version, which cobra adds
// only when grub runs, are added here too. Each command's long help is
// written as plain text laid out for a terminal (lists, tables of exit
// codes, <id>), so it goes into the pages as a preformatted block, as
// --help shows it; the other text cobra passes to Markdown (the one-line
// summaries, and for the man pages the usage lines and the flags' help)
// is escaped.
func docsRoot(man bool) *cobra.Command {
	ios := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	f := NewFactory(ios)
	f.Getenv = func(string) string { return "" }
	f.Landlock = func() (int, bool) { return 0, false }
	root := NewCmdRoot(f)
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	seen := map[*pflag.Flag]bool{}
	escapeFlag := func(fl *pflag.Flag) {
		if !seen[fl] {
			seen[fl] = true
			fl.Usage = markdownEscape(fl.Usage)
		}
	}
	var prepare func(*cobra.Command)
	prepare = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no date: the pages stay byte for byte the same
		if c.Long != "" {
			c.Long = "```\n" + strings.TrimRight(c.Long, "\n") + "\n```"
		}
		c.Short = markdownEscape(c.Short)
		if man {
			if name, rest, ok := strings.Cut(c.Use, " "); ok {
				c.Use = name + " " + markdownEscape(rest)
			}
			c.Flags().VisitAll(escapeFlag)
			c.PersistentFlags().VisitAll(escapeFlag)
		}
		for _, sub := range c.Commands() {
			prepare(sub)
		}
	}
	prepare(root)
	return root
}

// markdownEscape escapes the characters Markdown would take for markup,
// so that "<id>" or "**/*_test.go" reach the page as written (brackets
// stay: cobra looks for "[flags]" in a usage line).
func markdownEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_<>", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// WriteDocs writes the Markdown reference of every command that is not
// hidden into dir, one page per command (grub.md, grub_start.md,
// grub_config_trust.md, …), linked to each other. It removes the .md
// files of dir that it did not write, so a removed command's page goes.
func WriteDocs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "grub-docs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	prepend := func(string) string { return docsHeader }
	link := func(name string) string { return name }
	if err := doc.GenMarkdownTreeCustom(docsRoot(false), tmp, prepend, link); err != nil {
		return err
	}
	return replaceFiles(tmp, dir, ".md")
}

// WriteMan writes a man page (section 1) of every command that is not
// hidden into dir: grub.1, grub-start.1, …
func WriteMan(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	header := &doc.GenManHeader{
		Title:   "GRUB",
		Section: "1",
		Source:  "grub " + Version,
		Manual:  "grub manual",
		Date:    manDate(),
	}
	return doc.GenManTree(docsRoot(true), header, dir)
}

// manDate is the date a man page shows: the build's commit date when the
// binary was stamped with one, else today.
func manDate() *time.Time {
	if t, err := time.Parse(time.RFC3339, Date); err == nil && !t.IsZero() {
		return &t
	}
	now := time.Now().UTC()
	return &now
}

// replaceFiles copies the files of src whose names end in ext into dst,
// writing only those that changed, and removes dst's other files with
// that ending.
func replaceFiles(src, dst, ext string) error {
	want := map[string]bool{}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ext) {
			continue
		}
		want[name] = true
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if old, err := os.ReadFile(filepath.Join(dst, name)); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			return fmt.Errorf("write the command reference: %w", err)
		}
	}
	have, err := os.ReadDir(dst)
	if err != nil {
		return err
	}
	for _, e := range have {
		if name := e.Name(); strings.HasSuffix(name, ext) && !want[name] {
			if err := os.Remove(filepath.Join(dst, name)); err != nil {
				return err
			}
		}
	}
	return nil
}
