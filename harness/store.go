package harness

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/schemas"
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
	FileControl     = "control.json"
	FileControlLock = "control.lock"
	FileLock        = "lock"
	DirTurns        = "turns"
	DirSpill        = "spill"
)

// GrubDirName is the folder under the workspace root that holds the tasks.
const GrubDirName = ".grub"

// Gitignore is what grub writes to .grub/.gitignore. It keeps everything
// in a task folder out of git except grub's own tracked files
// (TrackedFiles): the runtime files (lock, control queue, turns/, spill/)
// and anything else left there. `*/*` ignores every entry
// of a task folder, the negations take grub's files back, and `*/*/*`
// keeps out the content of a folder made in one of their places. Its last
// rule matches the temp files of atomicfile.WriteFile, which a crash can
// leave behind.
var Gitignore = func() string {
	var b strings.Builder
	b.WriteString("# Written by grub: only grub's own files of a task are committed;\n")
	b.WriteString("# anything else in a task folder never is.\n*/*\n")
	for _, name := range TrackedFiles() {
		b.WriteString("!*/" + name + "\n")
	}
	b.WriteString("*/*/*\n" + atomicfile.TempGlob + "\n")
	return b.String()
}()

// oldGitignores are the .gitignore files earlier versions of grub wrote;
// ensureGitignore replaces one of them whole.
var oldGitignores = []string{
	"# Written by grub: runtime files of a running task, never committed.\n*/lock\n*/control.json\n*/control.lock\n*/turns/\n*/spill/\n*.tmp-*\n",
}

// TrackedFiles names the files of a task folder that are committed with
// every turn; nothing else in the folder is.
func TrackedFiles() []string {
	return []string{FileState, FileFeatureList, FileChecklist, FileProgressLog, FileInitScript}
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{8}$`)

// ValidID reports whether id has the form of a task id: 8 lowercase hex
// characters.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Store is the task store of one workspace.
type Store struct {
	Root string // absolute, cleaned workspace root
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
		data, err := s.marshalState(st)
		if err != nil {
			return err
		}
		if !prepared {
			if err := os.MkdirAll(s.GrubDir(), 0o755); err != nil {
				return fmt.Errorf("create %s: %w", GrubDirName, err)
			}
			if err := s.ensureGitignore(); err != nil {
				return err
			}
			prepared = true
		}
		err = os.Mkdir(s.Dir(st.ID), 0o755)
		if errors.Is(err, fs.ErrExist) && assign && attempt < 16 {
			continue
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create task: %s already exists", s.Rel(s.Dir(st.ID)))
		}
		if err != nil {
			return fmt.Errorf("create task: %w", err)
		}
		return s.writeNewTask(st, data)
	}
}

// writeNewTask writes the starting files into a fresh task folder;
// state.json comes last, so a folder without it is not (yet) a task.
func (s *Store) writeNewTask(st *State, stateData []byte) error {
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
	for _, f := range files {
		if err := atomicfile.WriteFile(s.Path(st.ID, f.name), []byte(f.data), f.perm); err != nil {
			return fmt.Errorf("create task %s: %w", st.ID, err)
		}
	}
	return nil
}

// EnsureGitignore brings an existing workspace's .grub/.gitignore up to
// date (the controller calls it when a run starts): a missing file or one
// an earlier grub wrote is written anew, a user's edited copy gets the
// lines it lacks appended. A workspace without .grub is left alone.
func (s *Store) EnsureGitignore() error {
	if _, err := os.Stat(s.GrubDir()); err != nil {
		return nil
	}
	return s.ensureGitignore()
}

// ensureGitignore writes .grub/.gitignore, or appends the lines a user's
// edited copy lacks.
func (s *Store) ensureGitignore() error {
	path := filepath.Join(s.GrubDir(), ".gitignore")
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && slices.Contains(oldGitignores, string(old))) {
		return atomicfile.WriteFile(path, []byte(Gitignore), 0o644)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", s.Rel(path), err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var missing []string
	for _, l := range strings.Split(Gitignore, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && !have[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	data := old
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, strings.Join(missing, "\n")+"\n"...)
	return atomicfile.WriteFile(path, data, 0o644)
}

// marshalState encodes st as indented JSON and validates it.
func (s *Store) marshalState(st *State) ([]byte, error) {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	data = append(data, '\n')
	rel := s.Rel(s.Path(st.ID, FileState))
	if !ValidID(st.ID) {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Violations: []schemas.Violation{
			{Pointer: "/id", Rule: fmt.Sprintf("%q is not a task id (8 lowercase hex characters)", st.ID)}}}
	}
	if err := validateState(st, rel); err != nil {
		return nil, err
	}
	return data, nil
}

// validateState checks st against the state schema as its JSON would be
// checked, in two parts: st with a null baseline, then the baseline
// against the feature-list schema (the state schema's other choice for
// it, and nothing else in it looks at the baseline). A baseline that
// schemas has found valid before is not parsed again, so saving the
// state several times a turn does not cost a check of the whole list
// each time.
func validateState(st *State, rel string) error {
	c := *st
	c.FeatureListBaseline = nil
	if err := schemas.ValidateGo(schemas.State, rel, &c); err != nil || st.FeatureListBaseline == nil {
		return err
	}
	err := schemas.ValidateGo(schemas.FeatureList, rel, st.FeatureListBaseline)
	var se *schemas.Error
	if errors.As(err, &se) {
		se.Schema = schemas.State
		for i := range se.Violations {
			se.Violations[i].Pointer = "/featureListBaseline" + se.Violations[i].Pointer
		}
	}
	return err
}

// SaveState validates st and writes it to state.json atomically. An invalid
// state is never written. SaveState writes st as given: the caller sets
// UpdatedAt.
func (s *Store) SaveState(st *State) error {
	data, err := s.marshalState(st)
	if err != nil {
		return err
	}
	if _, err := os.Stat(s.Dir(st.ID)); errors.Is(err, fs.ErrNotExist) {
		return s.notFound(st.ID)
	}
	return atomicfile.WriteFile(s.Path(st.ID, FileState), data, 0o644)
}

// StateBytes returns the raw content of a task's state.json.
func (s *Store) StateBytes(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	data, err := os.ReadFile(s.Path(id, FileState))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Rel(s.Path(id, FileState)), err)
	}
	return data, nil
}

// LoadState reads, validates and decodes a task's state.json. A file that is
// not valid is a *schemas.Error naming the file, the JSON pointer and the
// rule; a missing task is a *NotFoundError.
func (s *Store) LoadState(id string) (*State, error) {
	data, err := s.StateBytes(id)
	if err != nil {
		return nil, err
	}
	return s.decodeState(id, data)
}

func (s *Store) decodeState(id string, data []byte) (*State, error) {
	rel := s.Rel(s.Path(id, FileState))
	if err := schemas.Validate(schemas.State, rel, data); err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Syntax: err}
	}
	if st.ID != id {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Violations: []schemas.Violation{
			{Pointer: "/id", Rule: fmt.Sprintf("is %q but the task folder is %q; restore the file from git", st.ID, id)}}}
	}
	return &st, nil
}

// taskIDs lists the folders under .grub that hold a state.json, sorted.
func (s *Store) taskIDs() ([]string, error) {
	entries, err := os.ReadDir(s.GrubDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", GrubDirName, err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		if _, err := os.Stat(s.Path(e.Name(), FileState)); err == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// List loads every task, most recently updated first. A corrupt state.json
// makes List fail with its *schemas.Error. A workspace without .grub has no
// tasks.
func (s *Store) List() ([]*State, error) {
	ids, err := s.taskIDs()
	if err != nil {
		return nil, err
	}
	tasks := make([]*State, 0, len(ids))
	for _, id := range ids {
		st, err := s.LoadState(id)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, st)
	}
	slices.SortStableFunc(tasks, func(a, b *State) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return tasks, nil
}

// Resolve turns what a user typed into a task id. An empty id means the most
// recently updated task; a unique prefix of an id names that task. No tasks
// at all is ErrNoTasks; an unknown or ambiguous id is a *NotFoundError.
func (s *Store) Resolve(id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if id == "" {
		tasks, err := s.List()
		if err != nil {
			return "", err
		}
		if len(tasks) == 0 {
			return "", &noTasksError{root: s.Root}
		}
		return tasks[0].ID, nil
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
