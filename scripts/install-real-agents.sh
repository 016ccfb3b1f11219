#!/usr/bin/env bash
# Installs the real Claude Code and Codex CLIs from npm into a cache folder
# for `make test-real-agents`, and prints the folder's node_modules/.bin on
# its last line. Nothing is installed globally.
#
#   GRUB_REAL_AGENTS_DIR  the cache folder (default: $XDG_CACHE_HOME/grub/real-agents,
#                         or ./.cache/real-agents when XDG_CACHE_HOME is unset)
#   CLAUDE_CODE_VERSION   the @anthropic-ai/claude-code version (default below)
#   CODEX_VERSION         the @openai/codex version (default below)
#
# The defaults are the versions the test and the fixtures in
# agent/backend/testdata/real were made with; a folder that already holds
# them is left alone, so only the first run reaches the npm registry.
set -euo pipefail

CLAUDE_CODE_VERSION=${CLAUDE_CODE_VERSION:-2.1.197}
CODEX_VERSION=${CODEX_VERSION:-0.171.0}
if [ -n "${XDG_CACHE_HOME:-}" ]; then
	default_dir=$XDG_CACHE_HOME/grub/real-agents
else
	default_dir=$(pwd)/.cache/real-agents
fi
dir=${GRUB_REAL_AGENTS_DIR:-$default_dir}

command -v npm >/dev/null || { echo "install-real-agents: npm is needed (Node.js 18 or later)" >&2; exit 1; }

installed() { # package version
	local f=$dir/node_modules/$1/package.json
	[ -f "$f" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$f" "$2"
}

if installed @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" && installed @openai/codex "$CODEX_VERSION" &&
	[ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ]; then
	echo "install-real-agents: Claude Code $CLAUDE_CODE_VERSION and Codex $CODEX_VERSION already in $dir" >&2
else
	mkdir -p "$dir"
	echo "install-real-agents: installing Claude Code $CLAUDE_CODE_VERSION and Codex $CODEX_VERSION into $dir" >&2
	# --no-fund/--no-audit: no extra registry calls; the packages' own
	# postinstall (Claude Code copies its native binary into place) runs.
	npm install --prefix "$dir" --no-fund --no-audit --no-save \
		"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >&2
fi
"$dir/node_modules/.bin/claude" --version >&2
"$dir/node_modules/.bin/codex" --version >&2
echo "$dir/node_modules/.bin"
