package harness

import (
	"fmt"
	"path/filepath"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// WritePrompt writes the prompt of turn iteration of task id to
// turns/NNNN.prompt.md in its folder, atomically, and returns the file's
// absolute path. turns/ is made a real folder first (a link or a file in
// its place is removed, never followed), and a link or anything but a
// regular file where the turn's transcript goes is removed, so that the
// backend that creates it writes in the task folder.
func (s *Store) WritePrompt(id string, iteration int, text string) (string, error) {
	if !ValidID(id) {
		return "", s.notFound(id)
	}
	if _, err := s.ensureOwnDir(id, DirTurns, true); err != nil {
		return "", err
	}
	path := s.turnFile(id, iteration, "prompt.md")
	for _, p := range []string{path, s.TranscriptPath(id, iteration)} {
		if _, err := removeNonRegular(p, 0); err != nil {
			return "", fmt.Errorf("remove %s: %w", s.Rel(p), err)
		}
	}
	// Not synced: a prompt lost by a crash of the machine is written
	// again when the turn runs again.
	if err := atomicfile.WriteFileUnsynced(path, []byte(text), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// TranscriptPath is the absolute path of the transcript a backend writes
// for turn iteration of task id: turns/NNNN.jsonl in its folder.
func (s *Store) TranscriptPath(id string, iteration int) string {
	return s.turnFile(id, iteration, "jsonl")
}

// SpillDir is the absolute path of the folder where the agent's tools write
// results too large to hand to the model whole.
func (s *Store) SpillDir(id string) string { return s.Path(id, DirSpill) }

// turnFile is turns/NNNN.<ext> in the folder of task id.
func (s *Store) turnFile(id string, iteration int, ext string) string {
	return filepath.Join(s.Dir(id), DirTurns, fmt.Sprintf("%04d.%s", iteration, ext))
}

// ProtectedFiles names the files of a task folder the agent may neither
// read nor write, each with the reason the agent is told when it tries. It
// returns a new map on each call.
func ProtectedFiles() map[string]string {
	return map[string]string{
		FileState:           FileState + " is written only by grub; the state you need is in your turn prompt",
		FileTurnLedger:      FileTurnLedger + " is grub's record of the turns, written only by grub",
		FileAcceptedList:    FileAcceptedList + " is grub's copy of the last feature list it accepted, written only by grub; edit " + FileFeatureList,
		FileAcceptedChanges: FileAcceptedChanges + " is written only by grub; edit " + FileFeatureList,
		fileAcceptedNext:    fileAcceptedNext + " is written only by grub; edit " + FileFeatureList,
		FileLock:            FileLock + " is the runner lock of grub and is off limits to the agent",
		FileControl:         FileControl + " is the control queue of grub and is off limits to the agent",
		FileControlLock:     FileControlLock + " guards the control queue of grub and is off limits to the agent",
	}
}

// ReadOnlyFiles names the files of a task folder the agent may read but
// not write with its file tools, each with the reason it is told: grub's
// records that grub alone writes and that are not ProtectedFiles. The
// agent's own files stay writable: feature-list.json (grub restores what
// it may not change), init.sh and progress-log.md (notes). It returns a
// new map on each call.
func ReadOnlyFiles() map[string]string {
	return map[string]string{
		FileChecklist: FileChecklist + " is rendered by grub from the accepted feature list after every turn; edit " + FileFeatureList,
		fileKeep:      fileKeep + " is grub's link to the progress log, written only by grub; append notes to " + FileProgressLog,
	}
}

// SkippedDirs names the folders of a task folder that the agent's searches
// (list_files, glob, grep) do not enter from outside: the transcripts and
// the spilled tool outputs, whose copies of earlier tool results would
// drown real matches. It returns a new slice on each call.
func SkippedDirs() []string { return []string{DirTurns, DirSpill} }
