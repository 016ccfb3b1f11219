package gitx

import (
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
)

// rulesCache keeps the config and the ignore rules that apply everywhere
// (loadRules) that a Repo read last, so that the calls of one turn (the
// change token before and after the agent, the commit) parse them once.
// They come from up to nine files: the repository's config, the global
// config (the first of its candidates that exists), /etc/gitconfig, the
// excludes file the config names, .git/info/exclude, and the attribute
// files outside the work tree (.git/info/attributes, the global one,
// /etc/gitattributes: outsideConversion). Each is stat-ed
// (following links, as it is read) before it is read, and the rules are
// used again only while every one of them, present or absent, stats the
// same: device, inode, size, mode, modification and change times, under
// the guard's rule (guard_stat.go) that a file whose change time was
// within its racy margin of the reading is never trusted, so that a
// same-size edit in the same tick of the file system's clock is still
// seen. The environment that names the files (HOME, XDG_CONFIG_HOME) and
// the git directory are part of the key. The rules are shared, never
// changed once loaded.
type rulesCache struct {
	mu    sync.Mutex
	last  *rulesEntry      // nil: nothing cached
	now   func() time.Time // nil: time.Now (tests move it)
	loads int              // how many times the rules were read (tests)
}

type rulesEntry struct {
	env   rulesEnv
	files []ruleFile
	cfg   *gitConfig
	ign   *ignores
}

// rulesEnv is what names the rule files besides the config's contents.
type rulesEnv struct {
	gitDir, home, xdg string
}

// ruleFile is one rule file as it stat-ed before it was read.
type ruleFile struct {
	path   string // absolute, or relative to the git directory when inGit
	inGit  bool
	absent bool
	st     guardStat
}

func currentRulesEnv(gitDir billy.Filesystem) rulesEnv {
	env := rulesEnv{xdg: os.Getenv("XDG_CONFIG_HOME")}
	env.home, _ = os.UserHomeDir()
	if gitDir != nil {
		env.gitDir = gitDir.Root()
	}
	return env
}

// stat stats the file now; false when it cannot be told apart from a
// later version (no inode data, or an error other than not existing).
func (f ruleFile) stat(gitDir billy.Filesystem) (ruleFile, bool) {
	var fi fs.FileInfo
	var err error
	if f.inGit {
		fi, err = gitDir.Stat(f.path)
	} else {
		fi, err = os.Stat(f.path)
	}
	now := ruleFile{path: f.path, inGit: f.inGit}
	if isNotExist(err) {
		now.absent = true
		return now, true
	}
	if err != nil {
		return now, false
	}
	var ok bool
	now.st, ok = statOf(fi)
	return now, ok
}

// load returns the rules: the cached ones when every file they were read
// from is as it was, else read afresh (loadRules).
func (c *rulesCache) load(g *git.Repository, gitDir billy.Filesystem) (*gitConfig, *ignores, error) {
	if c == nil {
		return loadRules(g, gitDir)
	}
	env := currentRulesEnv(gitDir)
	if e := c.cached(env, gitDir); e != nil {
		return e.cfg, e.ign, nil
	}
	start := time.Now()
	if c.now != nil {
		start = c.now()
	}
	var files []ruleFile
	trusted := true
	stamp := func(f ruleFile) {
		now, ok := f.stat(gitDir)
		if ok && !now.absent && now.st.ctime >= start.Add(-racyMarginOf(now.st.ctime)).UnixNano() {
			ok = false // changed too recently to vouch for what is read next
		}
		files, trusted = append(files, now), trusted && ok
	}
	for _, f := range configFiles(gitDir) {
		stamp(f)
	}
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, nil, err
	}
	if p := excludesPath(cfg); p != "" {
		stamp(ruleFile{path: p})
	}
	if gitDir != nil {
		stamp(ruleFile{path: gitDir.Join("info", "exclude"), inGit: true})
		stamp(ruleFile{path: gitDir.Join("info", "attributes"), inGit: true})
	}
	for _, p := range []string{attributesPath(cfg), systemAttributes} {
		if p != "" {
			stamp(ruleFile{path: p})
		}
	}
	ign, err := loadIgnores(cfg, gitDir)
	if err != nil {
		return nil, nil, err
	}
	if cfg.convert, err = outsideConversion(cfg, gitDir); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loads++
	if trusted {
		c.last = &rulesEntry{env: env, files: files, cfg: cfg, ign: ign}
	} else {
		c.last = nil
	}
	return cfg, ign, nil
}

// configFiles are the files loadConfig reads from: the repository's
// config (in the git directory), every candidate of the global config
// (go-git reads the first that exists) and the system config.
func configFiles(gitDir billy.Filesystem) []ruleFile {
	var files []ruleFile
	if gitDir != nil {
		files = append(files, ruleFile{path: "config", inGit: true})
	}
	for _, scope := range []config.Scope{config.GlobalScope, config.SystemScope} {
		paths, _ := config.Paths(scope)
		for _, p := range paths {
			files = append(files, ruleFile{path: p})
		}
	}
	return files
}

// cached is the last entry when its environment is env and its files
// stat as they did; nil otherwise.
func (c *rulesCache) cached(env rulesEnv, gitDir billy.Filesystem) *rulesEntry {
	c.mu.Lock()
	e := c.last
	c.mu.Unlock()
	if e == nil || e.env != env || (gitDir == nil) != (env.gitDir == "") {
		return nil
	}
	for _, f := range e.files {
		if now, ok := f.stat(gitDir); !ok || now != f {
			return nil
		}
	}
	return e
}
