#!/usr/bin/env bash
# grub init.sh: the idempotent smoke check of this project.
#
# The grub controller runs this script after every feature an agent marks as
# passing and before it accepts a task as complete. It must exit 0 only when
# the project builds and its quick checks pass, and it must be safe to run
# any number of times: no prompts, no destructive steps, no servers left
# running, no dependence on what an earlier run left behind.
set -euo pipefail

# The script lives at .grub/<id>/init.sh: work from the workspace root.
cd "$(dirname "$0")/../.."

# --- get your bearings ---------------------------------------------------------
echo "== workspace: $(pwd)"
if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "== git status --short (first 50 lines)"
  git status --short 2>/dev/null | head -n 50 || true
fi
echo "== top-level files"
ls -A

# --- project smoke check: THE INITIALIZER MUST FILL THIS IN ---------------------
# Replace the two lines below with the commands that prove the project works,
# quickly (well under a minute), for example:
#   go build ./... && go test -short ./...
#   npm ci && npm test
#   python -m pytest -q
echo "init.sh: the project smoke check is not written yet: the initializer must replace this line" >&2
exit 1
