package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
)

//go:embed grep.md
var grepDescription string

// grepKeep is how many bytes of a line grep matches against; the rest of
// a longer line is not searched.
const grepKeep = 64 << 10

// GrepParams are the arguments of the grep tool.
type GrepParams struct {
	Pattern    string `json:"pattern" description:"The RE2 regular expression to search for, matched against each line."`
	Path       string `json:"path,omitempty" description:"The file or folder to search, relative to the workspace root; default the root."`
	Include    string `json:"include,omitempty" description:"Only search files whose name matches this glob, such as *.go; a glob with / is matched against the path under path."`
	IgnoreCase bool   `json:"ignore_case,omitempty" description:"Match without regard to letter case."`
}

// GrepTool searches file content.
type GrepTool struct {
	base
	maxMatches int
}

// NewGrepTool returns the grep tool, confined to cfg.Workspace and showing
// at most cfg.MaxGrepMatches matches.
func NewGrepTool(cfg Config) Tool {
	cfg = cfg.withDefaults()
	return &GrepTool{base: newBase("grep", grepDescription, GrepParams{}, cfg), maxMatches: cfg.MaxGrepMatches}
}

// Run implements Tool.
func (t *GrepTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

// grepSearch collects the matches of one grep call.
type grepSearch struct {
	re    *regexp.Regexp
	max   int
	count int
	lines []string
}

func (t *GrepTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p GrepParams
	if err := decodeArgs(args, &p); err != nil {
		return "", err
	}
	if p.Pattern == "" {
		return "", mistakef("pattern is empty; give a regular expression to search for")
	}
	expr := p.Pattern
	if p.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", mistakef("pattern %q is not a valid RE2 regular expression: %v. Escape characters such as ( [ { . * + ? with a backslash to match them literally; look-around and back-references are not supported", p.Pattern, err)
	}
	include, err := parseInclude(p.Include)
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
	fi, err := os.Stat(tg.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", mistakef("%s does not exist; find files with glob or list_files", tg.rel)
	case err != nil:
		return "", mistakef("cannot open %s: %v", tg.rel, err)
	}

	s := &grepSearch{re: re, max: t.maxMatches}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return "", mistakef("%s is not a regular file (%s); grep searches regular files only", tg.rel, fi.Mode().Type())
		}
		if err := s.file(ctx, tg.abs, tg.rel); err != nil {
			return "", err
		}
	} else {
		err = t.ws.walk(ctx, tg.abs, func(e walkEntry) error {
			if !e.d.Type().IsRegular() || !include(e.segs) {
				return nil
			}
			if _, bad := t.ws.protectedReason(e.abs); bad {
				return nil
			}
			return s.file(ctx, e.abs, t.ws.display(e.abs))
		})
		if err != nil {
			return "", err
		}
	}

	if s.count == 0 {
		where := tg.rel
		if p.Include != "" {
			where += fmt.Sprintf(" (files matching %q)", p.Include)
		}
		return fmt.Sprintf("no matches for %q in %s", p.Pattern, where), nil
	}
	out := strings.Join(s.lines, "\n")
	if rest := s.count - len(s.lines); rest > 0 {
		out += fmt.Sprintf("\n[%d more matches not shown; narrow the pattern, path or include]", rest)
	}
	return out, nil
}

// file searches one file, shown to the model as name. A file that cannot
// be read or looks binary is passed over; only a cancelled ctx is an
// error.
func (s *grepSearch) file(ctx context.Context, abs, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := openNoFollow(abs)
	if err != nil {
		return nil
	}
	defer f.Close()
	lr := newLineReader(f, grepKeep)
	if bin, err := lr.looksBinary(); err != nil || bin {
		return nil
	}
	for n := 1; ; n++ {
		line, full, err := lr.next()
		if errors.Is(err, io.EOF) || err != nil {
			return nil
		}
		if !s.re.Match(line) {
			continue
		}
		s.count++
		if s.count <= s.max {
			s.lines = append(s.lines, fmt.Sprintf("%s:%d: %s", name, n, clipLine(line, full, MaxGrepLineChars)))
		}
	}
}

// parseInclude turns grep's include glob into a filter on path segments
// under the searched folder: a glob without "/" is matched against the
// file's name, one with "/" against its whole path there.
func parseInclude(include string) (func(segs []string) bool, error) {
	if include == "" {
		return func([]string) bool { return true }, nil
	}
	if !strings.Contains(include, "/") {
		if _, err := path.Match(include, ""); err != nil {
			return nil, mistakef("include %q is malformed (%v); use *, ? and [abc], such as *.go", include, err)
		}
		return func(segs []string) bool {
			ok, _ := path.Match(include, segs[len(segs)-1])
			return ok
		}, nil
	}
	g, err := parseGlob("include", include)
	if err != nil {
		return nil, err
	}
	return g.match, nil
}
