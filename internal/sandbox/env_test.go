package sandbox

import (
	"slices"
	"testing"
)

func TestSecretName(t *testing.T) {
	secret := []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "gh_token", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "CLIENT_SECRET", "DB_PASSWORD", "PGPASSWORD", "my_secret_thing"}
	plain := []string{"PATH", "HOME", "GOCACHE", "TOKENIZERS_PARALLELISM", "API_KEYS_FILE", "SSH_AUTH_SOCK", "GIT_ASKPASS", "PASSWD_FILE", "TOKEN_URL", ""}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}

func TestScrubEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"OPENAI_API_KEY=sk-1",
		"HOME=/home/u",
		"GITHUB_TOKEN=ghp",
		"DB_PASSWORD=hunter2",
		"AWS_SECRET_ACCESS_KEY=x",
		"EMPTY=",
		"NPM_TOKEN=n",
		"malformed",
	}
	tests := []struct {
		name string
		pass []string
		want []string
	}{
		{"no pass", nil, []string{"PATH=/usr/bin", "HOME=/home/u", "EMPTY=", "malformed"}},
		{"pass one", []string{"GITHUB_TOKEN"}, []string{"PATH=/usr/bin", "HOME=/home/u", "GITHUB_TOKEN=ghp", "EMPTY=", "malformed"}},
		{"pass is exact", []string{"github_token", "NPM"}, []string{"PATH=/usr/bin", "HOME=/home/u", "EMPTY=", "malformed"}},
		{"pass several", []string{"NPM_TOKEN", "DB_PASSWORD", "PATH"}, []string{"PATH=/usr/bin", "HOME=/home/u", "DB_PASSWORD=hunter2", "EMPTY=", "NPM_TOKEN=n", "malformed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(env)
			got := ScrubEnv(env, tt.pass)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ScrubEnv = %q, want %q", got, tt.want)
			}
			if !slices.Equal(env, orig) {
				t.Errorf("ScrubEnv changed its input")
			}
		})
	}
}
