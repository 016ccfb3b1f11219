package gitx

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// describeRoot names every change under root between the copy and now.
func (s *GitDirSnapshot) describeRoot(root guardRoot, now map[string]guardEntry) []string {
	if root.kind == rootHead {
		return describeHead(s.label(root.path), entryIn(s.entries, root.path), entryIn(now, root.path))
	}
	var changes []string
	gone := "" // a folder that was removed or replaced: its contents go unnamed
	for _, p := range under(root, s.entries, now) {
		if gone != "" && strings.HasPrefix(p, gone+string(filepath.Separator)) {
			continue
		}
		was, have := entryIn(s.entries, p), entryIn(now, p)
		if was.same(have) {
			continue
		}
		if was.kind == kindDir && have.kind != kindDir {
			gone = p
		}
		name := s.label(p)
		if root.kind == rootConfig && p == root.path && (was.kind == kindFile || was.kind == kindMissing) && (have.kind == kindFile || have.kind == kindMissing) {
			changes = append(changes, describeConfig(name, was, have)...)
			continue
		}
		changes = append(changes, describeEntry(name, was, have))
	}
	return changes
}

// describeEntry says how one path changed.
func describeEntry(name string, was, have guardEntry) string {
	switch {
	case have.kind == kindBlocked:
		return fmt.Sprintf("%s is now behind %s, which is no longer a folder", name, have.target)
	case was.kind == kindMissing || was.kind == kindBlocked:
		return fmt.Sprintf("%s was added%s", name, what(have))
	case have.kind == kindMissing:
		return fmt.Sprintf("%s was removed", name)
	case was.kind != have.kind:
		return fmt.Sprintf("%s was replaced by %s", name, strings.TrimPrefix(what(have), " as "))
	case was.kind == kindLink:
		return fmt.Sprintf("%s now links to %s", name, quote(have.target))
	case was.kind == kindFile && string(was.data) != string(have.data):
		if was.mode != have.mode {
			return fmt.Sprintf("%s was changed, and its mode from %s to %s", name, was.mode, have.mode)
		}
		return fmt.Sprintf("%s was changed", name)
	case was.mode&0o111 == 0 && have.mode&0o111 != 0:
		return fmt.Sprintf("%s was made executable", name)
	default:
		return fmt.Sprintf("%s changed mode from %s to %s", name, was.mode, have.mode)
	}
}

// what describes a new entry's kind for "was added".
func what(e guardEntry) string {
	switch e.kind {
	case kindDir:
		return " as a folder"
	case kindLink:
		return " as a link to " + quote(e.target)
	case kindOther:
		return " as a special file"
	case kindFile:
		if e.mode&0o111 != 0 {
			return " (executable)"
		}
	}
	return ""
}

// describeConfig names the keys that changed in a config file: each key
// that names a program or another config file on its own, the others
// together. A file that does not parse is "changed".
func describeConfig(name string, was, have guardEntry) []string {
	var changes []string
	switch {
	case was.kind == kindMissing:
		changes = append(changes, name+" was added")
	case have.kind == kindMissing:
		return []string{name + " was removed"}
	case was.mode != have.mode:
		changes = append(changes, fmt.Sprintf("%s changed mode from %s to %s", name, was.mode, have.mode))
	}
	before, errB := parseConfig(was.data)
	after, errA := parseConfig(have.data)
	if errB != nil || errA != nil {
		return append(changes, name+" was changed (it does not parse as git config: "+firstErr(errA, errB).Error()+")")
	}
	old, cur := flattenConfig(before), flattenConfig(after)
	var keys []string
	for k := range old {
		keys = append(keys, k)
	}
	for k := range cur {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var others []string
	for _, k := range keys {
		o, c := old[k], cur[k]
		if strings.Join(o, "\x00") == strings.Join(c, "\x00") && len(o) == len(c) {
			continue
		}
		if !namesProgram(k) {
			others = append(others, k)
			continue
		}
		changes = append(changes, name+": "+describeKey(k, o, c))
	}
	if len(others) > 0 {
		changes = append(changes, fmt.Sprintf("%s: other settings changed (%s)", name, strings.Join(others, ", ")))
	}
	if len(changes) == 0 && string(was.data) != string(have.data) {
		changes = append(changes, name+" was changed (comments or layout only)")
	}
	return changes
}

func describeKey(k string, old, cur []string) string {
	isInclude := strings.HasSuffix(k, ".path") && (strings.HasPrefix(k, "include.") || strings.HasPrefix(k, "includeif."))
	switch {
	case isInclude && len(cur) > 0:
		return fmt.Sprintf("%s now points at %s", k, quoteAll(cur))
	case len(old) == 0 && strings.HasPrefix(k, "alias."):
		return fmt.Sprintf("%s was added: %s", k, quoteAll(cur))
	case len(old) == 0:
		return fmt.Sprintf("%s was set to %s", k, quoteAll(cur))
	case len(cur) == 0:
		return fmt.Sprintf("%s was removed (it was %s)", k, quoteAll(old))
	default:
		return fmt.Sprintf("%s was changed from %s to %s", k, quoteAll(old), quoteAll(cur))
	}
}

// flattenConfig maps section[.subsection].key (section and key lower-case, as
// git prints them) to its values in order.
func flattenConfig(cfg *format.Config) map[string][]string {
	m := map[string][]string{}
	add := func(prefix string, opts format.Options) {
		for _, o := range opts {
			k := prefix + "." + strings.ToLower(o.Key)
			m[k] = append(m[k], o.Value)
		}
	}
	for _, s := range cfg.Sections {
		sec := strings.ToLower(s.Name)
		add(sec, s.Options)
		for _, sub := range s.Subsections {
			add(sec+"."+sub.Name, sub.Options)
		}
	}
	return m
}

// programSections are config sections all of whose keys name a program, a
// command or another config file to read.
var programSections = map[string]bool{
	"alias": true, "filter": true, "include": true, "includeif": true, "pager": true,
	"credential": true, "gpg": true, "browser": true, "man": true, "difftool": true,
	"mergetool": true, "sendemail": true, "protocol": true, "trailer": true,
	"instaweb": true, "web": true, "guitool": true,
}

// programKeys are single keys that name a program or change what git
// runs (section.key, or section.*.key for any subsection).
var programKeys = map[string]bool{
	"core.fsmonitor": true, "core.hookspath": true, "core.sshcommand": true, "core.pager": true,
	"core.editor": true, "core.askpass": true, "core.gitproxy": true, "core.alternaterefscommand": true,
	"core.attributesfile": true, "core.excludesfile": true, "core.worktree": true,
	"sequence.editor": true, "diff.external": true, "diff.tool": true, "merge.tool": true,
	"diff.*.textconv": true, "diff.*.command": true, "merge.*.driver": true,
	"interactive.difffilter": true, "remote.*.uploadpack": true, "remote.*.receivepack": true,
	"submodule.*.update": true, "imap.tunnel": true, "uploadpack.packobjectshook": true,
	"ssh.variant": true, "core.fsmonitorhookversion": true,
}

// namesProgram reports whether a flattened key names a program or a
// command git may run, or a file that changes what it runs.
func namesProgram(k string) bool {
	sec, rest, _ := strings.Cut(k, ".")
	if programSections[sec] {
		return true
	}
	if programKeys[k] {
		return true
	}
	if i := strings.LastIndex(rest, "."); i >= 0 {
		return programKeys[sec+".*"+rest[i:]]
	}
	return false
}

// quote shows a value from the repository safely: Go-quoted (control
// characters escaped), cut after 100 bytes.
func quote(v string) string {
	const max = 100
	if len(v) > max {
		return strconv.Quote(v[:max]) + "…"
	}
	return strconv.Quote(v)
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = quote(v)
	}
	return strings.Join(q, ", ")
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
