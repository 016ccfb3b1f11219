package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

//go:embed list_files.md
var listFilesDescription string

// ListFilesParams are the arguments of the list_files tool.
type ListFilesParams struct {
	Path  string `json:"path,omitempty" description:"The folder to list, relative to the workspace root; default the root."`
	Depth int    `json:"depth,omitempty" description:"How many levels to list; 1 (the default) is the folder's own entries."`
}

// ListFilesTool lists folders.
type ListFilesTool struct{ base }

// NewListFilesTool returns the list_files tool, confined to cfg.Workspace.
func NewListFilesTool(cfg Config) Tool {
	return &ListFilesTool{base: newBase("list_files", listFilesDescription, ListFilesParams{}, cfg)}
}

// Run implements Tool.
func (t *ListFilesTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

func (t *ListFilesTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p ListFilesParams
	if err := decodeArgs(args, &p); err != nil {
		return "", err
	}
	depth := p.Depth
	switch {
	case depth == 0:
		depth = DefaultListDepth
	case depth < 0 || depth > MaxListDepth:
		return "", mistakef("depth %d is out of range; give 1 to %d", p.Depth, MaxListDepth)
	}
	if p.Path == "" {
		p.Path = "."
	}
	tg, err := t.ws.resolve(p.Path, readAccess)
	if err != nil {
		return "", err
	}
	if err := requireDir(tg, "list_files"); err != nil {
		return "", err
	}

	var lines []string
	more := false
	err = t.ws.walk(ctx, tg.abs, func(e walkEntry) error {
		if len(lines) == MaxListEntries {
			more = true
			return fs.SkipAll
		}
		lines = append(lines, entryName(e))
		if e.d.IsDir() && (len(e.segs) >= depth) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	name := tg.rel
	if !strings.HasSuffix(name, "/") {
		name += "/"
	}
	if len(lines) == 0 {
		return fmt.Sprintf("%s is empty", name), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (depth %d):\n", name, depth)
	b.WriteString(strings.Join(lines, "\n"))
	if more {
		fmt.Fprintf(&b, "\n[listing stopped at %d entries; list a subfolder or lower the depth to see the rest]", MaxListEntries)
	}
	return b.String(), nil
}

// requireDir refuses, with a model mistake, a target that is not an
// existing folder.
func requireDir(tg target, tool string) error {
	fi, err := os.Stat(tg.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return mistakef("%s does not exist; list the workspace root with list_files to see what is there", tg.rel)
	case err != nil:
		return mistakef("cannot open %s: %v", tg.rel, err)
	case !fi.IsDir():
		return mistakef("%s is a file, not a folder; %s needs a folder (read files with read_file)", tg.rel, tool)
	}
	return nil
}
