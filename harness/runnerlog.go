package harness

import "os"

// FileRunnerLog is where a detached runner (grub start --detach, resume
// --detach, answer --detach) writes its output once it is running: in
// the task folder, never committed (Gitignore's `*/*`), appended to by
// every detached run of the task.
const FileRunnerLog = "runner.log"

// RunnerLogPath is the path of task id's runner log.
func (s *Store) RunnerLogPath(id string) string { return s.Path(id, FileRunnerLog) }

// OpenRunnerLog opens (creating) task id's runner log for appending,
// never through a link: a link or folder in its place is removed first,
// and a hard link to a file elsewhere is refused.
func (s *Store) OpenRunnerLog(id string) (*os.File, error) {
	if err := s.checkTaskDirs(id); err != nil {
		return nil, err
	}
	path := s.RunnerLogPath(id)
	if _, err := removeNonRegular(path, 0); err != nil {
		return nil, err
	}
	return s.openOwnFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644, "")
}
