package gitx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/grub-dev/grub/internal/termsafe"
)

// A repository "converts" when git would not commit a file's bytes as
// they are on disk: a clean filter (filter=…, Git LFS's filter=lfs), end-
// of-line normalisation (text, text=auto, eol=…, the old crlf, or
// core.autocrlf true or input), working-tree-encoding=… or ident. gitx
// cannot apply those itself (a filter is a program of the user's config),
// so where any is asked for, the files a scan reads are hashed by the git
// program (`git hash-object --stdin-paths`, with -w for a commit), which
// applies exactly what `git add` applies to each path; everything else of
// the commit (which paths, the index, the tree, the commit object, the
// branch's move) stays gitx's. Where nothing is asked for, no git program
// runs: the check costs the names the walk already reads (a .gitattributes
// in a folder it lists) and the config and attribute files outside the
// work tree, read with the rules cache (rulesCache).
//
// core.eol alone does not count: it names the line endings git writes to
// the work tree for files the attributes mark as text, and the commit's
// conversion comes from those attributes.

// convertMode says what a scan does where the repository converts.
type convertMode int

const (
	// convertRequired: the files are hashed by git, and a missing git
	// program is an error (a commit: its blobs must be git's).
	convertRequired convertMode = iota
	// convertIfGit: hashed by git when it is on PATH, else as on disk
	// (the change token and the dirty check: best effort without git).
	convertIfGit
)

// systemAttributes is the attributes file git reads for every user
// ($(prefix)/etc/gitattributes, /etc/gitattributes for Debian's git).
var systemAttributes = "/etc/gitattributes"

// convertingAttr reports whether one attribute of a gitattributes line
// asks git to change a file's bytes on commit. Unset (-text) and
// unspecified (!text) ask for nothing, nor does the binary macro.
func convertingAttr(tok string) bool {
	if strings.HasPrefix(tok, "-") || strings.HasPrefix(tok, "!") {
		return false
	}
	name, value, hasValue := strings.Cut(tok, "=")
	switch name {
	case "text", "crlf", "ident":
		return !hasValue || value != "false"
	case "eol", "filter", "working-tree-encoding":
		return hasValue && value != ""
	}
	return false
}

// attrLines lists the lines of a gitattributes file (its content data)
// that name a converting attribute, each prefixed with name and ": ".
func attrLines(name string, data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, tok := range strings.Fields(afterPattern(line)) {
			if convertingAttr(tok) {
				out = append(out, name+": "+termsafe.Line(line))
				break
			}
		}
	}
	return out
}

// afterPattern is a gitattributes line without its pattern: the first
// field, or a C-quoted string ("a b.txt") that may hold spaces.
func afterPattern(line string) string {
	if !strings.HasPrefix(line, `"`) {
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			return line[i:]
		}
		return ""
	}
	for i := 1; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '"':
			return line[i+1:]
		}
	}
	return ""
}

// outsideConversion lists what outside the work tree asks git to convert
// files: core.autocrlf (true or input) in the config git reads, and the
// converting lines of .git/info/attributes, of the global attributes file
// (core.attributesFile, else $XDG_CONFIG_HOME/git/attributes or
// ~/.config/git/attributes) and of /etc/gitattributes. A missing file
// asks for nothing; an unreadable one is an error.
func outsideConversion(cfg *gitConfig, gitDir billy.Filesystem) ([]string, error) {
	var out []string
	switch v := strings.ToLower(cfg.get("core", "autocrlf")); v {
	case "true", "yes", "on", "1", "input":
		out = append(out, "core.autocrlf="+v)
	}
	if gitDir != nil {
		data, err := readBilly(gitDir, gitDir.Join("info", "attributes"))
		if err != nil {
			return nil, fmt.Errorf("read .git/info/attributes: %w", err)
		}
		out = append(out, attrLines(".git/info/attributes", data)...)
	}
	for _, p := range []string{attributesPath(cfg), systemAttributes} {
		if p == "" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil && !isNotExist(err) {
			return nil, fmt.Errorf("read the attributes file %s: %w", p, err)
		}
		out = append(out, attrLines(p, data)...)
	}
	return out, nil
}

// readBilly reads a file of the git directory; nil for a missing one.
func readBilly(fs billy.Filesystem, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// attributesPath is the global attributes file: core.attributesFile (a
// leading ~/ is the home folder), else $XDG_CONFIG_HOME/git/attributes or
// ~/.config/git/attributes; "" when none can be named.
func attributesPath(cfg *gitConfig) string {
	path := cfg.get("core", "attributesfile")
	if path == "" {
		if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
			return filepath.Join(xdg, "git", "attributes")
		}
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, ".config", "git", "attributes")
		}
		return ""
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	return path
}

// Conversion lists what makes git convert files on their way into a
// commit in this workspace's repository, one line each for a person
// ("core.autocrlf=true", ".gitattributes: *.bin filter=lfs diff=lfs
// merge=lfs -text", ".git/info/attributes: …"); empty when git would
// commit every file as it is on disk. The .gitattributes files are those
// of the folders above the workspace and of every folder a commit's walk
// lists (ignored folders with nothing tracked are not walked, as git adds
// nothing from them). Where it is not empty, grub's commits have the git
// program hash the files they read (see the comment at the top of
// convert.go), and need it on PATH.
func (r *Repo) Conversion() ([]string, error) {
	w, err := r.openWorkTree()
	if err != nil {
		return nil, err
	}
	idx, err := w.readIndex()
	if err != nil {
		return nil, err
	}
	sc := newScanner(context.Background(), r, idx, w.cfg, nil, nil)
	comps := r.prefixComps()
	ps, err := w.ign.patternsAbove(r.root, comps)
	if err != nil {
		return nil, err
	}
	sc.attrsAbove(comps)
	if err := sc.walk(r.prefix, comps, ps, false); err != nil {
		return nil, err
	}
	out := append([]string(nil), w.cfg.convert...)
	lines, err := sc.attrReasons(false)
	return append(out, lines...), err
}

// attrsAbove notes the .gitattributes files of the folders above the
// workspace (comps: its path components), which apply to its files.
func (s *scanner) attrsAbove(comps []string) {
	for i := range comps {
		rel := joinRel(strings.Join(comps[:i], "/"), ".gitattributes")
		if fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() {
			s.attrFiles = append(s.attrFiles, rel)
		}
	}
}

// attrReasons reads the .gitattributes files the walk noted and lists
// their converting lines; with first it stops at the first.
func (s *scanner) attrReasons(first bool) ([]string, error) {
	var out []string
	for _, rel := range s.attrFiles {
		data, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(rel)))
		if isNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, err)
		}
		out = append(out, attrLines(rel, data)...)
		if first && len(out) > 0 {
			break
		}
	}
	return out, nil
}

// decideConversion sets viaGit when the repository converts (outside the
// work tree, or in a .gitattributes the walk noted) and the scan's mode
// has git hash the files; a commit without the git program is an error
// that names what asks for the conversion.
func (s *scanner) decideConversion() error {
	reasons := s.outside
	if len(reasons) == 0 {
		var err error
		if reasons, err = s.attrReasons(true); err != nil {
			return err
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	if !HasGitProgram() {
		if s.convert == convertRequired {
			return fmt.Errorf("this repository asks git to convert files when they are committed (%s), which grub has the git program do: %w; install git, or run the task with --no-commit and commit yourself", strings.Join(capList(reasons, 3), "; "), ErrNoGitProgram)
		}
		return nil
	}
	s.viaGit = true
	return nil
}

// hashWithGit has the git program hash the files at paths (repository
// paths) as `git add` would store them, its clean filters and end-of-line
// conversion applied by their attributes, and with write store the blobs
// in the object database: `git hash-object [-w] --stdin-paths`, one
// process for them all (gitCommand: no hooks, no fsmonitor, no GIT_*
// variables). It returns their hashes in order.
func hashWithGit(ctx context.Context, root string, paths []string, write bool) ([]plumbing.Hash, error) {
	args := []string{"hash-object"}
	if write {
		args = append(args, "-w")
	}
	cmd, err := gitCommand(ctx, root, append(args, "--stdin-paths")...)
	if err != nil {
		return nil, err
	}
	var in, out, stderr bytes.Buffer
	for _, p := range paths {
		in.WriteString(cQuote(p))
		in.WriteByte('\n')
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git hash-object, which applies the repository's filters and end-of-line conversion to the files grub commits, failed: %s", termsafe.Line(msg))
	}
	lines := strings.Fields(out.String())
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("git hash-object printed %d hashes for %d files", len(lines), len(paths))
	}
	hashes := make([]plumbing.Hash, len(lines))
	for i, l := range lines {
		if !plumbing.IsHash(l) {
			return nil, fmt.Errorf("git hash-object printed %q, not a SHA-1 object name", termsafe.Line(l))
		}
		hashes[i] = plumbing.NewHash(l)
	}
	return hashes, nil
}

// cQuote is p as a C-quoted string, the form of a path `git hash-object
// --stdin-paths` unquotes (any byte is safe in it, a newline included).
func cQuote(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
