package gitx

import (
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// HarnessFiles is the commit rule for grub's own folder. gitx does not
// know harness's names: internal/cli passes them in (WithHarness).
//
// Under Dir, a scan takes in only Dir/.gitignore, Dir/.gitattributes and
// Dir/<task>/<name> for each name in Tracked, each only as a regular file
// (never a link), and nothing else, whatever the ignore rules say: an
// agent that rewrites .grub/.gitignore (`!*`) cannot make grub commit its
// lock, control queue, transcripts or a file it drops there. They are
// committed as they are on disk, never converted (convert.go), whatever
// the repository's attributes say. Tracked files under Dir
// that the rule does not take in leave the index. When the repository's
// ignore rules (above Dir) ignore Dir itself and nothing under it is
// tracked, it is skipped, as any ignored folder is.
//
// Tasks, when set, names the task folders whose files a scan may take in
// (the ones grub made: internal/cli passes harness.Store.Registered): a
// task folder it refuses (one a turn planted) adds nothing, and what the
// index already tracks under it stays as it is (a task another grub
// made, in a clone, keeps its committed files).
//
// Each name in Keep (the user's .grub/config.toml) keeps its index entry
// exactly as it is: a committed file stays committed as the user
// committed it, whatever is on disk; edits the user has not committed are
// never staged, and an untracked one is never added.
type HarnessFiles struct {
	Dir     string                 // the tasks folder, relative to the workspace (".grub")
	Tracked []string               // the names committed in each task folder
	Tasks   func(name string) bool // the task folders taken in; nil: every one
	Keep    []string               // names directly under Dir whose index entries stay as they are
}

// WithHarness returns a copy of r whose scans (commits, the change token,
// the dirty check) apply h to grub's folder.
func (r *Repo) WithHarness(h HarnessFiles) *Repo {
	c := *r
	c.harness = &h
	return &c
}

// harnessRule is the scanner's form of r's HarnessFiles: the folder as a
// repository path, the tracked names as a set, the names kept as they
// are and the task filter. A zero rule (no WithHarness) has dir "".
func (r *Repo) harnessRule() (dir string, tracked, keep map[string]bool, tasks func(string) bool) {
	if r.harness == nil || r.harness.Dir == "" {
		return "", nil, nil, nil
	}
	tracked = make(map[string]bool, len(r.harness.Tracked))
	for _, n := range r.harness.Tracked {
		tracked[n] = true
	}
	keep = make(map[string]bool, len(r.harness.Keep))
	for _, n := range r.harness.Keep {
		keep[n] = true
	}
	return joinRel(r.prefix, path.Clean(filepath.ToSlash(r.harness.Dir))), tracked, keep, r.harness.Tasks
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
		case (d.Name() == ".gitignore" || d.Name() == ".gitattributes") && d.Type().IsRegular():
			s.addHarnessFile(rel, filepath.Join(abs, d.Name()))
		case s.harnessTasks != nil && !s.harnessTasks(d.Name()):
			s.keepTracked(rel)
		case d.Type().IsDir():
			if err := s.walkTaskDir(rel); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepTracked keeps the index entries under dir as they are: a task
// folder the rule does not take in neither adds nor loses anything.
func (s *scanner) keepTracked(dir string) {
	i := sort.SearchStrings(s.names, dir+"/")
	for ; i < len(s.names) && strings.HasPrefix(s.names[i], dir+"/"); i++ {
		if e := s.tracked[s.names[i]]; e != nil && !e.SkipWorktree && !s.excluded(e.Name) {
			c := *e
			s.out = append(s.out, &c)
		}
	}
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
	s.jobs = append(s.jobs, fileJob{rel: rel, abs: abs, old: old, harness: true})
}
