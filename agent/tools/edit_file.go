package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/grub-dev/grub/internal/atomicfile"
)

//go:embed edit_file.md
var editFileDescription string

// EditFileParams are the arguments of the edit_file tool.
type EditFileParams struct {
	Path       string `json:"path" description:"The file to edit, relative to the workspace root."`
	OldString  string `json:"old_string" description:"The exact text to replace; it must occur exactly once unless replace_all is true."`
	NewString  string `json:"new_string" description:"The text to put in its place; it must differ from old_string."`
	ReplaceAll bool   `json:"replace_all,omitempty" description:"Replace every occurrence of old_string instead of requiring exactly one."`
}

// maxListedLines is how many line numbers a "several matches" message
// lists.
const maxListedLines = 10

// lineNumberPrefix finds read_file's line-number prefixes copied into an
// old_string.
var lineNumberPrefix = regexp.MustCompile(`(?m)^ *[0-9]+\t`)

// EditFileTool replaces exact text in files.
type EditFileTool struct{ base }

// NewEditFileTool returns the edit_file tool, confined to cfg.Workspace.
func NewEditFileTool(cfg Config) Tool {
	return &EditFileTool{base: newBase("edit_file", editFileDescription, EditFileParams{}, cfg)}
}

// Run implements Tool.
func (t *EditFileTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

func (t *EditFileTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p EditFileParams
	if err := decodeArgs(args, &p); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tg, err := t.ws.resolve(p.Path, writeAccess)
	if err != nil {
		return "", err
	}
	switch {
	case p.OldString == "":
		return "", mistakef("old_string is empty; give the exact text to replace, or use write_file to create or rewrite a whole file")
	case p.OldString == p.NewString:
		return "", mistakef("old_string and new_string are the same, so the edit would change nothing; give the new text in new_string")
	}
	// The file is read and written back through the same root, opened on
	// its folder: the write never follows a link swapped in since.
	dir, name, err := openParent(tg, false, "read")
	if err != nil {
		return "", err
	}
	defer dir.Close()
	f, fi, err := openRegularIn(dir, name, tg, "edit_file")
	if err != nil {
		return "", err
	}
	if fi.Size() > MaxEditBytes {
		f.Close()
		return "", mistakef("%s is %d bytes, over edit_file's limit of %d; change it with the shell instead", tg.rel, fi.Size(), MaxEditBytes)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return "", mistakef("cannot read %s: %v", tg.rel, err)
	}
	content := string(data)

	n := strings.Count(content, p.OldString)
	switch {
	case n == 0:
		return "", mistakef("old_string was not found in %s. %s", tg.rel, noMatchHint(content, p.OldString))
	case n > 1 && !p.ReplaceAll:
		return "", mistakef("old_string occurs %d times in %s (starting on lines %s); add surrounding lines to old_string so that it matches exactly once, or set replace_all to true to replace every occurrence",
			n, tg.rel, matchLines(content, p.OldString))
	}
	first := 1 + strings.Count(content[:strings.Index(content, p.OldString)], "\n")
	if p.ReplaceAll {
		content = strings.ReplaceAll(content, p.OldString, p.NewString)
	} else {
		content = strings.Replace(content, p.OldString, p.NewString, 1)
	}
	if err := atomicfile.WriteFileIn(dir, name, []byte(content), fi.Mode().Perm()); err != nil {
		return "", mistakef("cannot write %s: %v", tg.rel, err)
	}
	if n == 1 {
		return fmt.Sprintf("replaced 1 occurrence in %s (line %d); the file is now %d bytes", tg.rel, first, len(content)), nil
	}
	return fmt.Sprintf("replaced %d occurrences in %s (the first on line %d); the file is now %d bytes", n, tg.rel, first, len(content)), nil
}

// noMatchHint guesses why old is not in content.
func noMatchHint(content, old string) string {
	switch {
	case lineNumberPrefix.MatchString(old) && !lineNumberPrefix.MatchString(content):
		return "old_string seems to hold read_file's line-number prefixes (number and tab); leave them out."
	case strings.Contains(content, "\r\n") && !strings.Contains(old, "\r\n") &&
		strings.Contains(content, strings.ReplaceAll(old, "\n", "\r\n")):
		return "The file has Windows line ends (\\r\\n); old_string must use them too."
	case strings.Contains(collapseSpace(content), collapseSpace(old)):
		return "It would match if spaces were ignored: check indentation (tabs or spaces) and trailing spaces, and copy the text exactly from read_file."
	}
	return "It must match exactly, including indentation and line ends; read_file the part you want to change and copy the text from there."
}

// collapseSpace replaces every run of white space with one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// matchLines lists the lines where old starts in content, at most
// maxListedLines of them.
func matchLines(content, old string) string {
	var lines []string
	line, pos := 1, 0
	for len(lines) < maxListedLines {
		i := strings.Index(content[pos:], old)
		if i < 0 {
			break
		}
		line += strings.Count(content[pos:pos+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
	s := strings.Join(lines, ", ")
	if strings.Count(content, old) > len(lines) {
		s += ", …"
	}
	return s
}
