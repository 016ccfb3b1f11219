#!/bin/sh
# Fake Claude Code for the claude backend's tests.
#
# It reads the prompt from stdin and records its arguments (one a line),
# its working directory and the prompt in $GRUB_HARNESS_DIR. It refuses to
# run (exit 64) without the flags grub must pass, and with a prompt given as
# an argument. Then it acts out the scenario named on the prompt's first
# line, printing a sample from testdata/claude.
here=$(dirname "$0")
prompt=$(cat)
scenario=$(printf '%s\n' "$prompt" | head -n 1)
printf '%s\n' "$@" > "$GRUB_HARNESS_DIR/argv"
pwd > "$GRUB_HARNESS_DIR/cwd"
printf '%s' "$prompt" > "$GRUB_HARNESS_DIR/stdin"

# has FLAG VALUE ARGS...: ARGS holds FLAG, followed by VALUE unless VALUE
# is empty.
has() {
	flag=$1 value=$2 prev=
	shift 2
	for a in "$@"; do
		if [ -z "$value" ] && [ "$a" = "$flag" ]; then return 0; fi
		if [ -n "$value" ] && [ "$prev" = "$flag" ] && [ "$a" = "$value" ]; then return 0; fi
		prev=$a
	done
	return 1
}
for req in "-p=" "--output-format=json" "--permission-mode=acceptEdits" "--allowedTools=Bash"; do
	flag=${req%%=*} value=${req#*=}
	if ! has "$flag" "$value" "$@"; then
		echo "fake claude: missing flag $flag $value" >&2
		exit 64
	fi
done
prev=
for a in "$@"; do
	if [ "$prev" = "--max-turns" ]; then
		case $a in '' | *[!0-9]*) echo "fake claude: --max-turns $a is not a number" >&2; exit 64 ;; esac
	fi
	if [ -n "$prompt" ] && [ "$a" = "$prompt" ]; then
		echo "fake claude: the prompt was passed as an argument" >&2
		exit 64
	fi
	prev=$a
done

case $scenario in
success) cat "$here/claude/success.json" ;;
error) cat "$here/claude/error_during_execution.json"; exit 1 ;;
max_turns) cat "$here/claude/error_max_turns.json"; exit 1 ;;
usage_limit) cat "$here/claude/usage_limit.json"; exit 1 ;;
rate_limit_stderr)
	echo 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization."}}' >&2
	exit 1 ;;
crash)
	echo 'starting session' >&2
	echo 'Error: Invalid API key · Please run /login' >&2
	exit 2 ;;
malformed) echo 'Here is my answer, not a JSON object {' ;;
hang)
	sleep 300 &
	echo $! > "$GRUB_HARNESS_DIR/child.pid.tmp"
	mv "$GRUB_HARNESS_DIR/child.pid.tmp" "$GRUB_HARNESS_DIR/child.pid"
	wait ;;
*) echo "fake claude: unknown scenario '$scenario'" >&2; exit 65 ;;
esac
