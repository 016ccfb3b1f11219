package sandbox

import (
	"slices"
	"strings"
)

// SecretName reports whether an environment variable name looks like it
// holds a secret: it ends in _API_KEY or _TOKEN, or contains SECRET or
// PASSWORD, ignoring case (OPENAI_API_KEY is one). Such variables are
// kept from the commands grub runs for the agent unless passed with
// --pass-env.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasSuffix(u, "_API_KEY") ||
		strings.HasSuffix(u, "_TOKEN") ||
		strings.Contains(u, "SECRET") ||
		strings.Contains(u, "PASSWORD")
}

// ScrubEnv returns env ("NAME=value" entries, as from os.Environ) without
// the variables whose names SecretName flags, except those named exactly
// in pass. Order is kept; env is not modified.
func ScrubEnv(env []string, pass []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if SecretName(name) && !slices.Contains(pass, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
