package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinkHops is how many symbolic links one path may pass through before
// it is refused, as the kernel's ELOOP limit does.
const maxLinkHops = 40

// access says what a tool will do with a path.
type access int

const (
	// readAccess also allows the spill folder when it is outside the
	// workspace, so that spilled results can be read back.
	readAccess access = iota
	writeAccess
)

// workspace confines paths to a workspace root.
type workspace struct {
	root  string // the root as configured, cleaned
	real  string // the root with symlinks resolved
	spill string // the spill folder as configured, cleaned; "" if none
	// spillReal is the spill folder with its parent's symlinks resolved
	// once, when the tools are built, and only when it lies outside the
	// workspace (read_file may read it there); "" otherwise. A link
	// planted later in its place leads elsewhere, so what it reaches is
	// never mistaken for the spill folder.
	spillReal string
	rootErr   error // why the root could not be resolved, reported on use
	// protected names the files of a task folder (tasksDir/<id>/) the model
	// may neither read nor write, with the reason it is told.
	protected map[string]string
	// readOnly names the files of a task folder the model may read but
	// not write, with the reason it is told.
	readOnly map[string]string
	tasksDir string   // the folder under the root holding the task folders
	skipped  []string // the task folders' folders walks do not enter
}

func newWorkspace(cfg Config) *workspace {
	w := &workspace{root: filepath.Clean(cfg.Workspace), spill: filepath.Clean(cfg.SpillDir), protected: cfg.Protected,
		readOnly: cfg.ReadOnly, tasksDir: cfg.TasksDir, skipped: cfg.Skipped}
	switch {
	case cfg.tasksErr() != nil:
		w.rootErr = cfg.tasksErr()
	case cfg.Workspace == "":
		w.rootErr = errors.New("tools: no workspace configured")
	case !filepath.IsAbs(cfg.Workspace):
		w.rootErr = fmt.Errorf("tools: workspace %q is not an absolute path", cfg.Workspace)
	default:
		real, err := filepath.EvalSymlinks(w.root)
		if err != nil {
			w.rootErr = fmt.Errorf("tools: workspace %s: %w", w.root, err)
		}
		w.real = real
	}
	w.spillReal = w.outsideSpill()
	return w
}

// outsideSpill returns the spill folder with its parent's symlinks resolved
// when it is configured outside the workspace, "" otherwise.
func (w *workspace) outsideSpill() string {
	if w.spill == "" || w.spill == "." || !filepath.IsAbs(w.spill) || w.real == "" {
		return ""
	}
	for _, root := range []string{w.root, w.real} {
		if _, ok := within(root, w.spill); ok {
			return ""
		}
	}
	parent, err := resolveLinks(filepath.Dir(w.spill), 0)
	if err != nil {
		return ""
	}
	real := filepath.Join(parent, filepath.Base(w.spill))
	if _, ok := within(w.real, real); ok {
		return ""
	}
	return real
}

// check reports a workspace that cannot be used: a machinery failure.
func (w *workspace) check() error {
	if w.rootErr != nil {
		return w.rootErr
	}
	if _, err := os.Stat(w.real); err != nil {
		return fmt.Errorf("tools: workspace: %w", err)
	}
	return nil
}

// target is a path a tool may use.
type target struct {
	abs string // absolute, symlinks resolved: what walks start from
	rel string // for messages: slash-separated and relative to the workspace root, or abs outside it
	// base and local are how the file tools reach it (openParent): base is
	// the folder opened as an os.Root (the resolved workspace root, or the
	// parent of the spill folder when that lies outside), local the path
	// below it, slash-separated, with no link in it when resolve checked.
	base, local string
}

// resolve confines the model's path p and resolves its symlinks.
//
// A relative p is taken from the workspace root; an absolute one must lie
// inside the root (as configured or as resolved). A path that leaves the
// workspace, lexically or through a symlink, and the protected harness
// files of any task are refused with a model mistake. With readAccess the
// spill folder is allowed even outside the workspace. A workspace that is
// gone is a machinery error.
func (w *workspace) resolve(p string, a access) (target, error) {
	if err := w.check(); err != nil {
		return target{}, err
	}
	if strings.TrimSpace(p) == "" {
		return target{}, mistakef("the path is empty; give a path relative to the workspace root, such as \".\" or \"src/main.go\"")
	}
	if strings.ContainsRune(p, 0) {
		return target{}, mistakef("the path %q contains a NUL byte", p)
	}
	var lexical string
	if filepath.IsAbs(p) {
		lexical = filepath.Clean(p)
	} else {
		lexical = filepath.Join(w.real, p)
	}
	// Where the path sits before symlinks are followed.
	inRoot := false
	for _, root := range []string{w.real, w.root} {
		if rel, ok := within(root, lexical); ok {
			lexical, inRoot = filepath.Join(w.real, rel), true
			break
		}
	}
	inSpill := !inRoot && a == readAccess && w.inSpill(lexical)
	if !inRoot && !inSpill {
		if filepath.IsAbs(p) {
			return target{}, mistakef("refused: %s is outside the workspace %s; every path must stay inside the workspace", p, w.root)
		}
		return target{}, mistakef("refused: %s leaves the workspace through \"..\"; every path must stay inside the workspace", p)
	}
	if msg, ok := w.refusedReason(lexical, a); ok {
		return target{}, mistakef("refused: %s", msg)
	}

	if msg, ok := w.grubLink(lexical); ok {
		return target{}, mistakef("refused: %s: %s", p, msg)
	}

	real, err := resolveLinks(lexical, 0)
	if err != nil {
		return target{}, mistakef("cannot resolve %s: %v", p, err)
	}
	rel, inside := within(w.real, real)
	base, local := w.real, rel
	if !inside && a == readAccess && w.spillReal != "" {
		if _, ok := within(w.spillReal, real); ok {
			base = filepath.Dir(w.spillReal)
			local, _ = within(base, real)
			inside, rel = true, real
		}
	}
	if !inside {
		return target{}, mistakef("refused: %s", w.escape(p, lexical, real))
	}
	if msg, ok := w.refusedReason(real, a); ok {
		return target{}, mistakef("refused: %s", msg)
	}
	return target{abs: real, rel: filepath.ToSlash(rel), base: base, local: filepath.ToSlash(local)}, nil
}

// inSpill reports whether p lies in the spill folder configured outside
// the workspace, as configured or with its parent resolved.
func (w *workspace) inSpill(p string) bool {
	if w.spillReal == "" {
		return false
	}
	if _, ok := within(w.spill, p); ok {
		return true
	}
	_, ok := within(w.spillReal, p)
	return ok
}

// grubLink reports whether p (lexical, absolute) passes through one of
// grub's own folders that is a symbolic link: .grub, a task folder
// .grub/<id>, its turns and spill folders, or the spill folder configured
// outside the workspace. Such a link is refused whatever it points at, so
// that a planted link never turns grub's folders into a way out.
func (w *workspace) grubLink(p string) (string, bool) {
	var folders []string
	if rel, ok := within(w.real, p); ok && rel != "." {
		parts := strings.Split(filepath.ToSlash(rel), "/")
		for i := 1; i <= len(parts) && i <= 3; i++ {
			prefix := strings.Join(parts[:i], "/")
			if w.grubFolder(prefix) {
				folders = append(folders, filepath.Join(w.real, filepath.FromSlash(prefix)))
			}
		}
	}
	if w.spillReal != "" && w.inSpill(p) {
		folders = append(folders, w.spillReal)
	}
	for _, f := range folders {
		fi, err := os.Lstat(f)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		dest, _ := os.Readlink(f)
		return fmt.Sprintf("%s is a symbolic link (to %s), and grub's own folders are never followed through a link", w.display(f), dest), true
	}
	return "", false
}

// grubFolder reports whether rel, relative to the workspace root, names
// the tasks folder (Config.TasksDir), a task folder in it, or a folder of a
// task that walks skip (its transcripts and spilled outputs).
func (w *workspace) grubFolder(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if w.tasksDir == "" || !strings.EqualFold(parts[0], w.tasksDir) {
		return false
	}
	return len(parts) <= 2 || (len(parts) == 3 && w.skipDir(rel))
}

// escape explains why p, lexically at lexical and resolved to real
// outside the workspace, is refused, naming the first symbolic link on the
// way when it can find it.
func (w *workspace) escape(p, lexical, real string) string {
	start, rel := w.real, ""
	if r, ok := within(w.real, lexical); ok {
		rel = r
	} else if w.spillReal != "" {
		if r, ok := within(w.spillReal, lexical); ok {
			start, rel = w.spillReal, r
		}
	}
	cur := start
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			break
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(cur)
			return fmt.Sprintf("%s resolves through the symbolic link %s (to %s) to %s, outside the workspace; tools never follow a link out of the workspace", p, w.display(cur), dest, real)
		}
	}
	return fmt.Sprintf("%s resolves through a symbolic link to %s, outside the workspace; tools never follow a link out of the workspace", p, real)
}

// display is how a path found under the real root is shown to the model.
func (w *workspace) display(abs string) string {
	if rel, ok := within(w.real, abs); ok {
		return filepath.ToSlash(rel)
	}
	return abs
}

// refusedReason reports whether abs, a path under the resolved root, is
// one the tools refuse for access a, and why: a path in a git directory
// (any component named .git: the top one, a nested repository's, however
// spelled, since resolve checks the lexical path and the path with links
// resolved), a protected harness file of some task, or for writing one of
// grub's records the agent may read.
func (w *workspace) refusedReason(abs string, a access) (string, bool) {
	rel, ok := within(w.real, abs)
	if !ok {
		return "", false
	}
	if msg, ok := gitRel(rel); ok {
		return msg, true
	}
	if msg, ok := protectedRel(w.tasksDir, w.protected, rel); ok {
		return msg, true
	}
	if a == writeAccess {
		return protectedRel(w.tasksDir, w.readOnly, rel)
	}
	return "", false
}

// gitRel reports whether rel, relative to the workspace root, lies in a
// git directory, and why it is refused. Names are compared without regard
// to case, so that a case-insensitive file system cannot be used around
// it.
func gitRel(rel string) (string, bool) {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(part, ".git") {
			return fmt.Sprintf("%s is in a git directory (.git), which the file tools never read or write: git runs its hooks and config with the user's rights; use git commands in the shell", filepath.ToSlash(rel)), true
		}
	}
	return "", false
}

// protectedReason reports whether abs, a path under the resolved root, is
// a protected harness file of some task, and why.
func (w *workspace) protectedReason(abs string) (string, bool) {
	rel, ok := within(w.real, abs)
	if !ok {
		return "", false
	}
	return protectedRel(w.tasksDir, w.protected, rel)
}

// protectedRel reports whether rel, a path relative to the workspace root,
// names <tasksDir>/<any>/<name> for a name in protected, and why. Names
// are compared without regard to case, so that a case-insensitive file
// system cannot be used around it.
func protectedRel(tasksDir string, protected map[string]string, rel string) (string, bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if tasksDir == "" || len(parts) != 3 || !strings.EqualFold(parts[0], tasksDir) {
		return "", false
	}
	for name, why := range protected {
		if strings.EqualFold(parts[2], name) {
			return fmt.Sprintf("%s (%s)", why, strings.Join(parts, "/")), true
		}
	}
	return "", false
}

// within reports whether p (clean, absolute) is root or under it, and p
// relative to root.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// resolveLinks resolves every symbolic link in p, an absolute clean path,
// including a last element that is a link to something that does not exist
// yet; the part of p that does not exist is kept as is.
func resolveLinks(p string, hops int) (string, error) {
	if hops > maxLinkHops {
		return "", errors.New("too many levels of symbolic links")
	}
	// The longest prefix of p that exists (without following its last
	// element), and the names after it.
	existing, rest := p, ""
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err == nil {
		return filepath.Join(real, rest), nil
	}
	// Every element of existing exists, so only its last one can fail to
	// resolve: a link whose target does not exist (yet). Follow it by hand.
	fi, lerr := os.Lstat(existing)
	if lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", err
	}
	dest, lerr := os.Readlink(existing)
	if lerr != nil {
		return "", lerr
	}
	parent, perr := filepath.EvalSymlinks(filepath.Dir(existing))
	if perr != nil {
		return "", perr
	}
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(parent, dest)
	}
	return resolveLinks(filepath.Join(filepath.Clean(dest), rest), hops+1)
}

// openNoFollow opens path, resolved by resolve or found by walk, for
// reading without following a symbolic link put in its place since.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
}
