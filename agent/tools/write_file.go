package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/grub-dev/grub/internal/atomicfile"
)

//go:embed write_file.md
var writeFileDescription string

// WriteFileParams are the arguments of the write_file tool.
type WriteFileParams struct {
	Path    string `json:"path" description:"The file to write, relative to the workspace root; missing parent folders are created."`
	Content string `json:"content" description:"The complete new content of the file."`
}

// WriteFileTool writes whole files.
type WriteFileTool struct{ base }

// NewWriteFileTool returns the write_file tool, confined to cfg.Workspace.
func NewWriteFileTool(cfg Config) Tool {
	return &WriteFileTool{base: newBase("write_file", writeFileDescription, WriteFileParams{}, cfg)}
}

// Run implements Tool.
func (t *WriteFileTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	text, err := t.run(ctx, args)
	return finish(t.sp, text, err)
}

func (t *WriteFileTool) run(ctx context.Context, args json.RawMessage) (string, error) {
	var p WriteFileParams
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
	dir, name, err := openParent(tg, true, "write")
	if err != nil {
		return "", err
	}
	defer dir.Close()
	perm, existed := fs.FileMode(0o644), false
	fi, err := dir.Lstat(name)
	switch {
	case err == nil && fi.IsDir():
		return "", mistakef("%s is a folder; give the path of a file", tg.rel)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return "", inUseMistake(tg, &swappedError{name: tg.rel}, "")
	case err == nil && !fi.Mode().IsRegular():
		return "", mistakef("%s is not a regular file (%s); write_file replaces regular files only", tg.rel, fi.Mode().Type())
	case err == nil:
		perm, existed = fi.Mode().Perm(), true
	case !errors.Is(err, fs.ErrNotExist):
		return "", mistakef("cannot write %s: %v", tg.rel, err)
	}
	// Through the folder's root: a link swapped in for the file itself is
	// replaced by the rename, never written through.
	if err := atomicfile.WriteFileIn(dir, name, []byte(p.Content), perm); err != nil {
		return "", mistakef("cannot write %s: %v", tg.rel, err)
	}
	if existed {
		return fmt.Sprintf("wrote %d bytes to %s (replaced its previous content)", len(p.Content), tg.rel), nil
	}
	return fmt.Sprintf("wrote %d bytes to %s (new file)", len(p.Content), tg.rel), nil
}
