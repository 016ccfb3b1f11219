package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

//go:embed glob.md
var globDescription string

// GlobParams are the arguments of the glob tool.
type GlobParams struct {
	Pattern string `json:"pattern" description:"The glob pattern, such as **/*.go; relative to path."`
	Path    string `json:"path,omitempty" description:"The folder to search, relative to the workspace root; default the root."`
}

// GlobTool finds paths by pattern.
type GlobTool struct{ base }

// NewGlobTool returns the glob tool, confined to cfg.Workspace.
func NewGlobTool(cfg Config) Tool {
	return &GlobTool{base: newBase("glob", globDescription, GlobParams{}, cfg)}
}

// Run implements Tool.
func (t *GlobTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

func (t *GlobTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p GlobParams
	if err := decodeArgs(args, &p); err != nil {
		return "", err
	}
	pat, err := parseGlob("pattern", p.Pattern)
	if err != nil {
		return "", err
	}
	if p.Path == "" {
		p.Path = "."
	}
	tg, err := t.ws.resolve(p.Path, readAccess)
	if err != nil {
		return "", err
	}
	if err := requireDir(tg, "glob"); err != nil {
		return "", err
	}
	var found []string
	err = t.ws.walk(ctx, tg.abs, func(e walkEntry) error {
		if pat.match(e.segs) {
			found = append(found, entryName(e))
		}
		if e.d.IsDir() && !pat.mayMatchUnder(e.segs) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(found) == 0 {
		return fmt.Sprintf("no path under %s matches %q", tg.rel, p.Pattern), nil
	}
	slices.Sort(found)
	rest := 0
	if len(found) > MaxGlobResults {
		rest = len(found) - MaxGlobResults
		found = found[:MaxGlobResults]
	}
	var b strings.Builder
	if tg.rel != "." {
		fmt.Fprintf(&b, "paths relative to %s:\n", tg.rel)
	}
	b.WriteString(strings.Join(found, "\n"))
	if rest > 0 {
		fmt.Fprintf(&b, "\n[%d more matches not shown; narrow the pattern or the path]", rest)
	}
	return b.String(), nil
}
