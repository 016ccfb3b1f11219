package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

// maxGoalBytes is the most a goal may hold: every prompt carries it
// whole, so a file given by mistake (a log, a binary) is refused rather
// than sent to the model turn after turn.
const maxGoalBytes = 64 << 10

// readGoal is grub start's goal: the argument, or with --goal-file the
// content of file ("-": in, the standard input), trimmed of the white
// space around it and checked by checkGoal. An error names where the goal
// came from.
func readGoal(in io.Reader, file string, args []string) (string, error) {
	if file == "" {
		return checkGoal(args[0], "the goal")
	}
	what := "--goal-file " + file
	var r io.Reader
	if file == "-" {
		what = "--goal-file - (stdin)"
		r = in
	} else {
		f, err := os.Open(file)
		if errors.Is(err, fs.ErrNotExist) {
			return "", usageErrorf("%s: no such file", what)
		}
		if err != nil {
			return "", usageErrorf("%s: %v", what, err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return "", usageErrorf("%s: a folder, not a file", what)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxGoalBytes+1))
	if err != nil {
		return "", usageErrorf("%s: %v", what, err)
	}
	return checkGoal(string(data), what)
}

// checkGoal trims goal and refuses one that is empty, not valid UTF-8 or
// larger than maxGoalBytes; what names where it came from.
func checkGoal(goal, what string) (string, error) {
	if len(goal) > maxGoalBytes {
		return "", usageErrorf("%s: longer than %d KiB, the most a goal may be (every prompt carries it whole)", what, maxGoalBytes>>10)
	}
	if !utf8.ValidString(goal) {
		at := 0
		for at < len(goal) {
			r, n := utf8.DecodeRuneInString(goal[at:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at += n
		}
		return "", usageErrorf("%s: not valid UTF-8 (at byte %d); save it as UTF-8", what, at)
	}
	goal = strings.TrimSpace(goal)
	if goal == "" {
		return "", usageErrorf("%s: empty; grub start needs a goal: grub start \"add OAuth login to the API\"", what)
	}
	return goal, nil
}

// goalFileHelp is grub start's help on --goal-file.
var goalFileHelp = fmt.Sprintf(`The goal is the argument, or with --goal-file FILE the content of FILE (- for
the standard input; a relative path is relative to the current folder), such
as the PROMPT.md of a Ralph loop: valid UTF-8, not empty, at most %d KiB.`, maxGoalBytes>>10)
