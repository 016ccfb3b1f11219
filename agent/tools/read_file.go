package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

//go:embed read_file.md
var readFileDescription string

// ReadFileParams are the arguments of the read_file tool.
type ReadFileParams struct {
	Path   string `json:"path" description:"The file to read, relative to the workspace root."`
	Offset int    `json:"offset,omitempty" description:"The first line to return, 1-based; default 1."`
	Limit  int    `json:"limit,omitempty" description:"How many lines to return; default and maximum as the tool description says."`
}

// footerRoom is the part of the inline limit read_file keeps free for its
// closing line.
const footerRoom = 256

// ReadFileTool reads line ranges of workspace files.
type ReadFileTool struct{ base }

// NewReadFileTool returns the read_file tool, confined to cfg.Workspace
// (and cfg.SpillDir, to read spilled results back).
func NewReadFileTool(cfg Config) Tool {
	return &ReadFileTool{base: newBase("read_file", readFileDescription, ReadFileParams{}, cfg)}
}

// Run implements Tool.
func (t *ReadFileTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

func (t *ReadFileTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p ReadFileParams
	if err := decodeArgs(args, &p); err != nil {
		return "", err
	}
	if p.Offset < 0 || p.Limit < 0 {
		return "", mistakef("offset and limit must not be negative (offset %d, limit %d); offset is the 1-based first line", p.Offset, p.Limit)
	}
	offset, limit := max(p.Offset, 1), p.Limit
	if limit == 0 || limit > MaxReadLines {
		limit = MaxReadLines
	}
	tg, err := t.ws.resolve(p.Path, readAccess)
	if err != nil {
		return "", err
	}
	f, _, err := openRegular(tg, "read_file")
	if err != nil {
		return "", err
	}
	defer f.Close()

	lr := newLineReader(f, MaxLineChars*utf8.UTFMax)
	if bin, err := lr.looksBinary(); err != nil {
		return "", mistakef("cannot read %s: %v", tg.rel, err)
	} else if bin {
		return "", mistakef("%s looks like a binary file (it has NUL bytes); read_file shows text only. Inspect it with the shell (for example `file` or `xxd | head`).", tg.rel)
	}

	budget := t.sp.limit - footerRoom
	var b strings.Builder
	total, last, full := 0, 0, false
	for {
		line, n, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", mistakef("cannot read %s: %v", tg.rel, err)
		}
		total++
		if total%100000 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		if total < offset || total >= offset+limit || full {
			continue
		}
		s := fmt.Sprintf("%6d\t%s\n", total, clipLine(line, n, MaxLineChars))
		if last >= offset && b.Len()+len(s) > budget {
			full = true
			continue
		}
		b.WriteString(s)
		last = total
	}
	switch {
	case total == 0:
		return fmt.Sprintf("%s is empty (0 lines).", tg.rel), nil
	case offset > total:
		return "", mistakef("offset %d is past the end of %s, which has %d lines; use an offset from 1 to %d", offset, tg.rel, total, total)
	}
	switch {
	case full:
		fmt.Fprintf(&b, "(lines %d-%d of %d in %s; the output limit of %d bytes was reached; use offset=%d to read more)", offset, last, total, tg.rel, t.sp.limit, last+1)
	case last < total:
		fmt.Fprintf(&b, "(lines %d-%d of %d in %s; use offset=%d to read more)", offset, last, total, tg.rel, last+1)
	default:
		fmt.Fprintf(&b, "(lines %d-%d of %d in %s; end of file)", offset, last, total, tg.rel)
	}
	return b.String(), nil
}
