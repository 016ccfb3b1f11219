package gitx

import (
	"fmt"
	"os"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Fallback identity for commits when neither the environment nor any git
// config names one.
const (
	FallbackName  = "grub"
	FallbackEmail = "grub@localhost"
)

// gitConfig is the repository's configuration with the user's and the
// system's behind it: get returns the value of the most specific scope.
type gitConfig struct {
	scopes []*config.Config // local, global, system
	// convert is what outside the work tree asks git to convert files
	// on commit (outsideConversion), set by whoever loads the rules.
	convert []string
}

func loadConfig(g *git.Repository) (*gitConfig, error) {
	local, err := g.Config()
	if err != nil {
		return nil, fmt.Errorf("read the repository's .git/config: %w", err)
	}
	global, err := config.LoadConfig(config.GlobalScope)
	if err != nil {
		return nil, fmt.Errorf("read the global git config (~/.gitconfig or $XDG_CONFIG_HOME/git/config): %w; fix the file", err)
	}
	system, err := config.LoadConfig(config.SystemScope)
	if err != nil {
		return nil, fmt.Errorf("read the system git config (/etc/gitconfig): %w; fix the file", err)
	}
	return &gitConfig{scopes: []*config.Config{local, global, system}}, nil
}

func (c *gitConfig) get(section, key string) string {
	for _, s := range c.scopes {
		if s == nil || s.Raw == nil || !s.Raw.HasSection(section) {
			continue
		}
		if v := s.Raw.Section(section).Option(key); v != "" {
			return v
		}
	}
	return ""
}

// identity picks a commit signature the way git does: the environment
// (GIT_AUTHOR_NAME, GIT_COMMITTER_EMAIL, …), then author.* or committer.*,
// then user.*, from the repository config, the global config, the system
// config; and grub's fallback for whatever is still missing.
func (c *gitConfig) identity(role string, when time.Time) object.Signature {
	env := "GIT_" + strings.ToUpper(role) + "_"
	pick := func(field, fallback string) string {
		if v := os.Getenv(env + strings.ToUpper(field)); v != "" {
			return v
		}
		if v := c.get(role, field); v != "" {
			return v
		}
		if v := c.get("user", field); v != "" {
			return v
		}
		return fallback
	}
	clean := strings.NewReplacer("<", "", ">", "", "\n", " ", "\r", "")
	name := strings.TrimSpace(clean.Replace(pick("name", FallbackName)))
	email := strings.TrimSpace(clean.Replace(pick("email", FallbackEmail)))
	if name == "" {
		name = FallbackName
	}
	if email == "" {
		email = FallbackEmail
	}
	return object.Signature{Name: name, Email: email, When: when}
}

// fileMode reports whether the executable bit is trusted (core.fileMode,
// true unless set to false).
func (c *gitConfig) fileMode() bool {
	switch strings.ToLower(c.get("core", "filemode")) {
	case "false", "no", "off", "0":
		return false
	}
	return true
}

// fsyncs says which of the files a commit replaces are flushed to disk
// before they are renamed into place, as git decides it (core.fsync): by
// default neither the index nor the branch (git's default set is the
// pack files and their metadata, never the index, the refs or loose
// objects); the components "index", "reference" and the sets that hold
// them ("committed" holds the references, "added" both, "all") turn them
// on. As in git, "none" and "-index" only take away from the default
// set, which holds neither.
type fsyncs struct{ index, ref bool }

func (c *gitConfig) fsyncs() fsyncs {
	var f fsyncs
	for _, tok := range strings.Split(c.get("core", "fsync"), ",") {
		switch strings.TrimSpace(tok) {
		case "index":
			f.index = true
		case "reference", "committed":
			f.ref = true
		case "added", "all":
			f = fsyncs{index: true, ref: true}
		}
	}
	return f
}
