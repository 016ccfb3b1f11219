package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// WorkspaceFile is what ReadWorkspaceFile found.
type WorkspaceFile struct {
	// Found is false when there is no such file (nor a link to one inside
	// the workspace); the other fields are then empty.
	Found bool
	// Refused, when not empty, says why the file is there but was not
	// read: a link out of the workspace, a protected harness file, a
	// folder, a binary file. Text is then empty.
	Refused string
	// Text is the file's first bytes, at most the limit asked for, cut at
	// a UTF-8 boundary; invalid UTF-8 is replaced.
	Text string
	// Size is the whole file's size in bytes.
	Size int64
	// Cut reports that Text holds only the file's first bytes.
	Cut bool
}

// ReadWorkspaceFile reads the file at name (relative to cfg.Workspace)
// for grub itself, not for the model: the built-in agent's backend reads
// the project's instructions (AGENTS.md) with it at the start of every
// turn. It goes through exactly the confinement read_file does (resolve,
// then an os.Root entered one real folder at a time, the file opened
// without following a link swapped in since the check), so a link to
// anything outside the workspace (~/.ssh/id_rsa), into a git directory or
// to a protected harness file is refused, not read; a link that stays
// inside the workspace is followed. At most limit bytes are read.
//
// A refusal is a WorkspaceFile with Refused set; the error is for a
// machinery failure only (no usable workspace, a read error).
func ReadWorkspaceFile(cfg Config, name string, limit int) (WorkspaceFile, error) {
	ws := newWorkspace(cfg.withDefaults())
	if err := ws.check(); err != nil {
		return WorkspaceFile{}, err
	}
	tg, err := ws.resolve(name, readAccess)
	if err != nil {
		return refusedFile(err)
	}
	// Only to tell a missing file from one to read: the read itself never
	// uses the path by name.
	if _, err := os.Lstat(tg.abs); errors.Is(err, fs.ErrNotExist) {
		return WorkspaceFile{}, nil
	}
	f, fi, err := openRegular(tg, "grub")
	if err != nil {
		return refusedFile(err)
	}
	defer f.Close()
	buf := make([]byte, limit+utf8.UTFMax)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return WorkspaceFile{}, fmt.Errorf("read %s: %w", tg.rel, err)
	}
	data := buf[:n]
	if bytes.IndexByte(data, 0) >= 0 {
		return WorkspaceFile{Found: true, Refused: fmt.Sprintf("%s looks like a binary file (it has NUL bytes)", tg.rel), Size: fi.Size()}, nil
	}
	wf := WorkspaceFile{Found: true, Size: max(fi.Size(), int64(n))}
	if len(data) > limit {
		data, wf.Cut = data[:limit], true
		// Cut at a rune boundary: drop the start of a rune the limit split.
		for range utf8.UTFMax - 1 {
			if r, sz := utf8.DecodeLastRune(data); r != utf8.RuneError || sz != 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	wf.Text = string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
	return wf, nil
}

// refusedFile is the answer for err met reading a workspace file: a model
// mistake is a refusal (its words say why), anything else a failure.
func refusedFile(err error) (WorkspaceFile, error) {
	if m, ok := errors.AsType[*mistake](err); ok {
		return WorkspaceFile{Found: true, Refused: m.msg}, nil
	}
	return WorkspaceFile{}, err
}
