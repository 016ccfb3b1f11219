package harness

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/templates"
)

// The names of the files and folders in a task folder. Only this package
// spells them; the agent tools learn the protected ones from ProtectedFiles
// and the folders their searches skip from SkippedDirs.
const (
	FileState       = "state.json"
	FileFeatureList = "feature-list.json"
	FileChecklist   = "feature-checklist.md"
	FileProgressLog = "progress-log.md"
	FileInitScript  = "init.sh"
	FileTurnLedger  = "turns.jsonl"
	FileControl     = "control.json"
	FileControlLock = "control.lock"
	FileLock        = "lock"
	// FileAcceptedList holds the accepted feature list as of a base,
	// FileAcceptedChanges the changes since; fileAcceptedNext is a new
	// base until state.json names it (see accepted.go).
	FileAcceptedList    = "accepted-list.json"
	FileAcceptedChanges = "accepted-list.changes.jsonl"
	fileAcceptedNext    = "accepted-list.next.json"
	DirTurns            = "turns"
	DirSpill            = "spill"
)

// GrubDirName is the folder under the workspace root that holds the tasks.
const GrubDirName = ".grub"

// Gitignore is what grub writes to .grub/.gitignore. It keeps everything
// in a task folder out of git except grub's own tracked files
// (TrackedFiles): the runtime files (lock, control queue, turns/, spill/)
// and anything else left there. `*/*` ignores every entry
// of a task folder, the negations take grub's files back, and `*/*/*`
// keeps out the content of a folder made in one of their places. Then
// come the temp files of atomicfile.WriteFile, which a crash can leave
// behind, and the task folders a turn made, set aside (SetAsidePlanted),
// whose names are no task ids.
var Gitignore = func() string {
	var b strings.Builder
	b.WriteString("# Written by grub: only grub's own files of a task are committed;\n")
	b.WriteString("# anything else in a task folder never is.\n*/*\n")
	for _, name := range TrackedFiles() {
		b.WriteString("!*/" + name + "\n")
	}
	b.WriteString("*/*/*\n" + atomicfile.TempGlob + "\n")
	b.WriteString("/*" + plantedSuffix + "*/\n") // task folders a turn made, set aside (SetAsidePlanted)
	return b.String()
}()

// Gitattributes is what grub writes to .grub/.gitattributes. A commit
// takes grub's files of a task folder as grub wrote them, never through
// the filters, end-of-line or encoding conversion or ident the
// repository's attributes may ask for elsewhere (a turn's commit is
// recognised by the state.json it holds); these lines tell git the same,
// so that `git status` and the user's own `git add` agree with grub's
// commits. (.git/info/attributes, which git reads last, could still
// override them.)
const Gitattributes = "# Written by grub: grub's files of a task are committed as they are on disk.\n" +
	"/*/* -text -eol -filter -ident -working-tree-encoding\n"

// TrackedFiles names the files of a task folder that are committed with
// every turn; nothing else in the folder is.
func TrackedFiles() []string {
	return []string{FileState, FileFeatureList, FileChecklist, FileProgressLog, FileInitScript, FileTurnLedger}
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

// ValidID reports whether id has the form of a task id: 8 lowercase hex
// characters.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Store is the task store of one workspace.
type Store struct {
	Root string // absolute, cleaned workspace root
	// Host is the name of this machine as recorded in a task's lock;
	// empty means os.Hostname. grub sets it from $GRUB_HOSTNAME (CI
	// runners, tests playing a second machine).
	Host string
	// Private is the user's private grub folder (PrivateRoot), outside
	// every workspace; empty means none (PrivateDir fails).
	Private string

	accepted acceptedCache // the accepted lists this Store encoded, wrote and read (accepted.go)

	keepMu  sync.Mutex
	keep    *atomicfile.Batch // private files written unsynced, synced at one point (keepbatch.go)
	keeping bool              // between BeginKeep and SyncKept
}

// HostName is the name of this machine as locks record it: Host, or
// os.Hostname.
func (s *Store) HostName() string {
	if s.Host != "" {
		return s.Host
	}
	h, _ := os.Hostname()
	return h
}

// At returns the store of the workspace at root with s's settings (Host,
// Private):
// the same project in another work tree.
func (s *Store) At(root string) (*Store, error) {
	o, err := Open(root)
	if err != nil {
		return nil, err
	}
	o.Host = s.Host
	o.Private = s.Private
	return o, nil
}

// Open returns the store of the workspace at root. It makes root absolute
// and does no other IO.
func Open(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	return &Store{Root: filepath.Clean(abs)}, nil
}

// GrubDir is <root>/.grub.
func (s *Store) GrubDir() string { return filepath.Join(s.Root, GrubDirName) }

// Dir is the folder of task id: <root>/.grub/<id>.
func (s *Store) Dir(id string) string { return filepath.Join(s.Root, GrubDirName, id) }

// Path is a file in the folder of task id.
func (s *Store) Path(id, name string) string { return filepath.Join(s.Root, GrubDirName, id, name) }

// Rel returns p relative to the workspace root with forward slashes: the
// form stored in harness files and shown to users. A path outside the root
// is returned cleaned, with forward slashes; a relative path is taken as
// relative to the root already.
func (s *Store) Rel(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	rel, err := filepath.Rel(s.Root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	return filepath.ToSlash(rel)
}

// newID is NewID; tests replace it to force a collision.
var newID = NewID

// NewID returns a random task id: 8 lowercase hex characters.
func NewID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new task id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Create makes a new task folder for st and writes its starting files:
// init.sh (the template), progress-log.md (its header),
// feature-checklist.md (not planned yet) and state.json. It also writes
// .grub/.gitignore if missing. It does not write feature-list.json: the
// initializer agent does.
//
// The caller fills the goal, agent, limits and status. Create assigns an
// id when st.ID is empty, and fills Version, CreatedAt and UpdatedAt when
// zero, Locale ("en") and Phase (initializer) when empty. st is validated
// before anything is written; a given id that already exists is an error.
func (s *Store) Create(st *State) error {
	if st.Version == 0 {
		st.Version = StateVersion
	}
	now := time.Now().UTC()
	if st.CreatedAt.IsZero() {
		st.CreatedAt = now
	}
	if st.UpdatedAt.IsZero() {
		st.UpdatedAt = st.CreatedAt
	}
	if st.Locale == "" {
		st.Locale = "en"
	}
	st.Goal = validText(st.Goal)
	if st.Phase == "" {
		st.Phase = PhaseInitializer
	}
	assign := st.ID == ""
	prepared := false
	for attempt := 0; ; attempt++ {
		if assign {
			id, err := newID()
			if err != nil {
				return err
			}
			st.ID = id
		}
		data, accepted, err := s.newTaskFiles(st)
		if err != nil {
			return err
		}
		if !prepared {
			if fi, err := os.Stat(s.GrubDir()); err == nil && !fi.IsDir() {
				_, err := s.taskIDs()
				return err
			}
			if err := os.MkdirAll(s.GrubDir(), 0o755); err != nil {
				return fmt.Errorf("create %s: %w", GrubDirName, err)
			}
			if err := s.ensureGitignore(); err != nil {
				return err
			}
			prepared = true
		}
		err = s.makeTaskDir(st.ID)
		if errors.Is(err, fs.ErrExist) && assign && attempt < 16 {
			continue
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create task: %s already exists", s.Rel(s.Dir(st.ID)))
		}
		if err != nil {
			return fmt.Errorf("create task: %w", err)
		}
		return s.writeNewTask(st, data, accepted)
	}
}

// makeTaskDir makes the folder of a new task id, registering the task
// first (its private folder, when the store has a private root), so that
// a running turn's referee never takes the folder for one the turn
// planted (SetAsidePlanted). A folder already there is fs.ErrExist and
// is not registered.
func (s *Store) makeTaskDir(id string) error {
	if _, err := os.Lstat(s.Dir(id)); err == nil {
		return fs.ErrExist
	}
	if s.Private == "" {
		return os.Mkdir(s.Dir(id), 0o755)
	}
	priv, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	err = os.Mkdir(s.Dir(id), 0o755)
	if errors.Is(err, fs.ErrExist) {
		_ = os.Remove(priv) // another made it meanwhile: not ours (empty, so removed)
	}
	return err
}

// newTaskFiles renders a new task's state.json and, when it has an
// accepted list (benchmark fixtures), the list's base.
func (s *Store) newTaskFiles(st *State) (state, accepted []byte, err error) {
	st.AcceptedList = nil
	if l := st.FeatureListBaseline; l != nil {
		data, digest, err := s.acceptedBytes(st.ID, l)
		if err != nil {
			return nil, nil, err
		}
		accepted, st.AcceptedList = data, &AcceptedList{SHA256: digest, BaseSHA256: digest}
	}
	state, err = s.encodeState(st)
	return state, accepted, err
}

// writeNewTask writes the starting files into a fresh task folder;
// state.json comes last, so a folder without it is not (yet) a task.
func (s *Store) writeNewTask(st *State, stateData, accepted []byte) error {
	checklist, err := templates.RenderChecklist(st.Goal, nil)
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data string
		perm os.FileMode
	}{
		{FileInitScript, templates.InitScript, 0o755},
		{FileProgressLog, templates.ProgressLogHeader(st.ID, st.Goal), 0o644},
		{FileChecklist, checklist, 0o644},
		{FileState, string(stateData), 0o644},
	}
	if accepted != nil { // a task made with its list accepted (benchmark fixtures)
		files[len(files)-1].name, files[len(files)-1].data = FileAcceptedList, string(accepted)
		files = append(files, struct {
			name string
			data string
			perm os.FileMode
		}{FileState, string(stateData), 0o644})
	}
	for _, f := range files {
		if err := atomicfile.WriteFile(s.Path(st.ID, f.name), []byte(f.data), f.perm); err != nil {
			return fmt.Errorf("create task %s: %w", st.ID, err)
		}
	}
	return nil
}

// EnsureGitignore makes an existing workspace's .grub/.gitignore and
// .grub/.gitattributes grub's own again (the controller calls it when a
// run starts, the committer before every turn commit): grub owns those
// files, and a missing, edited or replaced one (a link, a folder) is
// written anew with Gitignore or Gitattributes. Rules of your own belong
// in the repository's other .gitignore and .gitattributes files. A
// workspace without .grub is left alone.
func (s *Store) EnsureGitignore() error {
	if _, err := os.Lstat(s.GrubDir()); err != nil {
		return nil
	}
	return s.ensureGitignore()
}

// ensureGitignore writes .grub/.gitignore and .grub/.gitattributes
// unless each is a regular file holding exactly Gitignore or
// Gitattributes. .grub itself must be a real folder.
func (s *Store) ensureGitignore() error {
	dir := s.GrubDir()
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a folder: grub does not write through a link", s.Rel(dir))
	}
	for name, content := range map[string]string{".gitignore": Gitignore, ".gitattributes": Gitattributes} {
		path := filepath.Join(dir, name)
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			if old, err := os.ReadFile(path); err == nil && string(old) == content {
				continue
			}
		}
		if _, err := removeNonRegular(path, 0o644); err != nil {
			return fmt.Errorf("remove %s to write it: %w", s.Rel(path), err)
		}
		if err := atomicfile.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// taskIDs lists the task folders under .grub, sorted: the folders named
// like a task id that hold a state.json or, when it is gone, another of
// grub's tracked files (a damaged task). A .grub that is not a folder is a
// *DamagedError.
func (s *Store) taskIDs() ([]string, error) {
	entries, err := os.ReadDir(s.GrubDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if fi, serr := os.Stat(s.GrubDir()); serr == nil && !fi.IsDir() {
			return nil, &DamagedError{File: GrubDirName, Problem: "is a file, not a folder",
				Fix: "grub keeps its tasks in the folder " + GrubDirName + "; move the file away (mv " + GrubDirName + " " + GrubDirName + ".old)"}
		}
		return nil, fmt.Errorf("read %s: %w", GrubDirName, err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		if _, err := os.Lstat(s.Path(e.Name(), FileState)); err == nil || s.hasTaskFiles(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// List loads every task, most recently updated first. A damaged task (a
// corrupt or missing state.json) makes List fail with its error; Scan
// lists the others and reports it. A workspace without .grub has no tasks.
func (s *Store) List() ([]*State, error) {
	tasks, damaged, err := s.Scan()
	if err != nil {
		return nil, err
	}
	if len(damaged) > 0 {
		return nil, damaged[0].Err
	}
	return tasks, nil
}

// sortTasks orders tasks most recently updated first.
func sortTasks(tasks []*State) {
	slices.SortStableFunc(tasks, func(a, b *State) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Resolve turns what a user typed into a task id. An empty id means the most
// recently updated healthy task, never one updated after now (Latest;
// with only damaged tasks, the first one's error); a unique prefix of an id names that task. No tasks
// at all is ErrNoTasks; an unknown or ambiguous id is a *NotFoundError.
func (s *Store) Resolve(id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if id == "" {
		tasks, damaged, err := s.Scan()
		if err != nil {
			return "", err
		}
		latest, future := Latest(tasks, time.Now())
		switch {
		case latest != nil:
			return latest.ID, nil
		case len(damaged) > 0:
			return "", damaged[0].Err
		case len(future) > 0:
			ids := make([]string, len(future))
			for i, st := range future {
				ids[i] = st.ID
			}
			return "", &futureOnlyError{ids: ids}
		}
		return "", &noTasksError{root: s.Root}
	}
	ids, err := s.taskIDs()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, known := range ids {
		if known == id {
			return id, nil
		}
		if strings.HasPrefix(known, id) {
			matches = append(matches, known)
		}
	}
	if len(matches) == 1 {
		return matches[0], nil
	}
	return "", &NotFoundError{ID: id, Known: ids, Matches: matches}
}

// notFound builds the error for a missing task, listing the known ids.
func (s *Store) notFound(id string) error {
	ids, _ := s.taskIDs()
	return &NotFoundError{ID: id, Known: ids}
}

// relativePaths returns paths with those inside the workspace made
// relative to its root (slash-separated; "." for the root itself); paths
// outside it stay absolute, and relative ones as they are. ResolvePath
// turns them back.
func (s *Store) relativePaths(paths []string) []string {
	if len(paths) == 0 {
		return paths
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if filepath.IsAbs(p) {
			if rel, err := filepath.Rel(s.Root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				p = filepath.ToSlash(rel)
			}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// ResolvePath is a path stored in a task's state (a sandbox path) as an
// absolute path on this machine: a relative one is taken from the
// workspace root.
func (s *Store) ResolvePath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.Root, filepath.FromSlash(p))
}
