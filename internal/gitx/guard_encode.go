package gitx

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// A guard's copy is kept on disk with the turn's record (outside the
// workspace), so that a run that resumes after a crash mid-turn compares
// and restores as the end of the turn would have. The form is generic:
// the guarded roots, and one record per path with its kind, mode, bytes
// or link target; whatever paths the guard covers, they are written the
// same way. lstat data is not kept: a decoded copy reads every file again.
// A new rootKind or entryKind needs its name in the maps below (Encode
// refuses a kind without one).

// guardCopyVersion is the version of the encoded form.
const guardCopyVersion = 1

type encodedCopy struct {
	Version  int            `json:"version"`
	WorkTree string         `json:"workTree"`
	Roots    []encodedRoot  `json:"roots"`
	Entries  []encodedEntry `json:"entries"`
	// Nested are the .git entries below the work tree's top when the
	// copy was taken: one the turn adds is a repository it created.
	Nested []string `json:"nested,omitempty"`
	// ModuleHomes are the modules/ folders searched, Modules the
	// submodule git directories in them: one the turn adds is a change.
	ModuleHomes []string `json:"moduleHomes,omitempty"`
	Modules     []string `json:"modules,omitempty"`
}

type encodedRoot struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"` // file, config, tree, head
	Base      string `json:"base,omitempty"`
	DotGit    bool   `json:"dotGit,omitempty"`
	Nested    bool   `json:"nested,omitempty"`
	MustBeDir bool   `json:"mustBeDir,omitempty"`
}

type encodedEntry struct {
	Path   string      `json:"path"`
	Kind   string      `json:"kind"` // absent, file, dir, link, other, blocked
	Mode   fs.FileMode `json:"mode,omitempty"`
	Data   []byte      `json:"data,omitempty"` // base64 in JSON
	Target string      `json:"target,omitempty"`
}

var (
	rootKindNames  = map[rootKind]string{rootFile: "file", rootConfig: "config", rootTree: "tree", rootHead: "head"}
	entryKindNames = map[entryKind]string{kindMissing: "absent", kindFile: "file", kindDir: "dir", kindLink: "link", kindOther: "other", kindBlocked: "blocked"}
)

// Encode writes the copy in a form DecodeGitDirSnapshot reads back.
func (s *GitDirSnapshot) Encode() ([]byte, error) {
	out := encodedCopy{Version: guardCopyVersion, WorkTree: s.workTree, Roots: []encodedRoot{}, Entries: []encodedEntry{}}
	for _, r := range s.roots {
		name, ok := rootKindNames[r.kind]
		if !ok {
			return nil, fmt.Errorf("the git guard's copy: root kind %d has no name in rootKindNames", r.kind)
		}
		out.Roots = append(out.Roots, encodedRoot{Path: r.path, Kind: name, Base: r.base, DotGit: r.dotGit, Nested: r.nested, MustBeDir: r.mustBeDir})
	}
	for n := range s.nested {
		out.Nested = append(out.Nested, n)
	}
	sort.Strings(out.Nested)
	out.ModuleHomes = s.moduleHomes
	for m := range s.modules {
		out.Modules = append(out.Modules, m)
	}
	sort.Strings(out.Modules)
	paths := make([]string, 0, len(s.entries))
	for p := range s.entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := s.entries[p]
		name, ok := entryKindNames[e.kind]
		if !ok {
			return nil, fmt.Errorf("the git guard's copy: entry kind %d has no name in entryKindNames", e.kind)
		}
		out.Entries = append(out.Entries, encodedEntry{Path: p, Kind: name, Mode: e.mode, Data: e.data, Target: e.target})
	}
	return json.Marshal(out)
}

// DecodeGitDirSnapshot reads a copy Encode wrote. Check and Restore then
// work as on the copy it was taken from (every file is read again: no
// lstat data is trusted). An invalid copy is an error.
func DecodeGitDirSnapshot(data []byte) (*GitDirSnapshot, error) {
	var in encodedCopy
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("the git guard's copy: %w", err)
	}
	if in.Version != guardCopyVersion {
		return nil, fmt.Errorf("the git guard's copy has version %d, want %d", in.Version, guardCopyVersion)
	}
	if !filepath.IsAbs(in.WorkTree) {
		return nil, fmt.Errorf("the git guard's copy names no work tree")
	}
	s := &GitDirSnapshot{workTree: in.WorkTree, entries: map[string]guardEntry{}, nested: map[string]bool{}, now: time.Now}
	for _, n := range in.Nested {
		if !filepath.IsAbs(n) || filepath.Clean(n) != n {
			return nil, fmt.Errorf("the git guard's copy: bad nested repository %q", n)
		}
		s.nested[n] = true
	}
	s.modules = map[string]bool{}
	for _, m := range append(slices.Clone(in.ModuleHomes), in.Modules...) {
		if !filepath.IsAbs(m) || filepath.Clean(m) != m {
			return nil, fmt.Errorf("the git guard's copy: bad submodule git directory %q", m)
		}
	}
	s.moduleHomes = in.ModuleHomes
	for _, m := range in.Modules {
		s.modules[m] = true
	}
	for _, r := range in.Roots {
		kind, ok := lookupKind(rootKindNames, r.Kind)
		if !ok || !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
			return nil, fmt.Errorf("the git guard's copy: bad root %q (%s)", r.Path, r.Kind)
		}
		s.roots = append(s.roots, guardRoot{path: r.Path, kind: kind, base: r.Base, dotGit: r.DotGit, nested: r.Nested, mustBeDir: r.MustBeDir})
	}
	for _, e := range in.Entries {
		kind, ok := lookupKind(entryKindNames, e.Kind)
		if !ok || !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path || e.Mode&^fs.ModePerm != 0 {
			return nil, fmt.Errorf("the git guard's copy: bad entry %q (%s)", e.Path, e.Kind)
		}
		s.entries[e.Path] = guardEntry{kind: kind, mode: e.Mode, data: e.Data, target: e.Target}
	}
	return s, nil
}

func lookupKind[K comparable](names map[K]string, name string) (K, bool) {
	for k, n := range names {
		if n == name {
			return k, true
		}
	}
	var zero K
	return zero, false
}
