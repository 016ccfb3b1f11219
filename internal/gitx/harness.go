package gitx

import (
	"path"
	"path/filepath"
)

// HarnessFiles is the commit rule for grub's own folder. gitx does not
// know harness's names: internal/cli passes them in (WithHarness).
//
// Under Dir, a scan takes in only Dir/.gitignore and Dir/<task>/<name> for
// each name in Tracked, each only as a regular file (never a link), and
// nothing else, whatever the ignore rules say: an agent that rewrites
// .grub/.gitignore (`!*`) cannot make grub commit its lock, control
// queue, transcripts or a file it drops there. Tracked files under Dir
// that the rule does not take in leave the index. When the repository's
// ignore rules (above Dir) ignore Dir itself and nothing under it is
// tracked, it is skipped, as any ignored folder is.
//
// Each name in Keep (the user's .grub/config.toml) keeps its index entry
// exactly as it is: a committed file stays committed as the user
// committed it, whatever is on disk; edits the user has not committed are
// never staged, and an untracked one is never added.
type HarnessFiles struct {
	Dir     string   // the tasks folder, relative to the workspace (".grub")
	Tracked []string // the names committed in each task folder
	Keep    []string // names directly under Dir whose index entries stay as they are
}

// WithHarness returns a copy of r whose scans (commits, the change token,
// the dirty check) apply h to grub's folder.
func (r *Repo) WithHarness(h HarnessFiles) *Repo {
	c := *r
	c.harness = &h
	return &c
}

// harnessRule is the scanner's form of r's HarnessFiles: the folder as a
// repository path and the tracked names as a set. A zero rule (no
// WithHarness) has dir "".
func (r *Repo) harnessRule() (dir string, tracked, keep map[string]bool) {
	if r.harness == nil || r.harness.Dir == "" {
		return "", nil, nil
	}
	tracked = make(map[string]bool, len(r.harness.Tracked))
	for _, n := range r.harness.Tracked {
		tracked[n] = true
	}
	keep = make(map[string]bool, len(r.harness.Keep))
	for _, n := range r.harness.Keep {
		keep[n] = true
	}
	return joinRel(r.prefix, path.Clean(filepath.ToSlash(r.harness.Dir))), tracked, keep
}

// walkHarness scans grub's folder dir (a repository path) by the harness
// rule instead of the ignore rules.
func (s *scanner) walkHarness(dir string) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	for name := range s.harnessKeep {
		if old := s.tracked[joinRel(dir, name)]; old != nil {
			c := *old
			s.out = append(s.out, &c)
		}
	}
	abs, des, err := s.readFolder(dir)
	if err != nil || des == nil {
		return err
	}
	for _, d := range des {
		rel := joinRel(dir, d.Name())
		switch {
		case s.exclude[rel] || s.harnessKeep[d.Name()]:
		case d.Name() == ".gitignore" && d.Type().IsRegular():
			s.addHarnessFile(rel, filepath.Join(abs, d.Name()))
		case d.Type().IsDir():
			if err := s.walkTaskDir(rel); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkTaskDir takes in the tracked regular files of one task folder.
func (s *scanner) walkTaskDir(dir string) error {
	abs, des, err := s.readFolder(dir)
	if err != nil || des == nil {
		return err
	}
	for _, d := range des {
		rel := joinRel(dir, d.Name())
		if s.harnessTracked[d.Name()] && d.Type().IsRegular() && !s.exclude[rel] {
			s.addHarnessFile(rel, filepath.Join(abs, d.Name()))
		}
	}
	return nil
}

func (s *scanner) addHarnessFile(rel, abs string) {
	old := s.tracked[rel]
	if old != nil && old.SkipWorktree {
		return
	}
	s.jobs = append(s.jobs, fileJob{rel: rel, abs: abs, old: old})
}
