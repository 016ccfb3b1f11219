#!/bin/sh
# Fake Claude Code for the claude backend's tests.
#
# It reads the prompt from stdin and records its arguments (one a line),
# its working directory and the prompt in $GRUB_HARNESS_DIR. It refuses to
# run (exit 64) without the flags grub must pass, and with a prompt given as
# an argument. Then it acts out the scenario named on the prompt's first
# line, printing a sample from testdata/claude (stream-json, as
# `claude -p --output-format stream-json --verbose` prints).
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
for req in "-p=" "--output-format=stream-json" "--verbose=" "--permission-mode=acceptEdits" "--allowedTools=Bash"; do
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

hang() {
	sleep 300 &
	echo $! > "$GRUB_HARNESS_DIR/child.pid.tmp"
	mv "$GRUB_HARNESS_DIR/child.pid.tmp" "$GRUB_HARNESS_DIR/child.pid"
	wait
}

case $scenario in
success) cat "$here/claude/stream_success.jsonl" ;;
api_error) cat "$here/claude/stream_api_error.jsonl"; exit 1 ;;
max_turns_stream) cat "$here/claude/stream_max_turns.jsonl"; exit 1 ;;
json_success) cat "$here/claude/success.json" ;;
verbose_array) cat "$here/claude/verbose_array.json" ;;
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
partial)
	# The session's first messages, then nothing until it is killed.
	head -n 5 "$here/claude/stream_success.jsonl"
	hang ;;
offline)
	# API retries that never end.
	head -n 1 "$here/claude/stream_success.jsonl"
	n=0
	while :; do
		n=$((n + 1))
		echo '{"type":"system","subtype":"api_retry","attempt":'$n',"max_retries":10,"retry_delay_ms":500,"error_status":529,"error":"overloaded_error","session_id":"7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}'
		sleep 0.05
	done ;;
hang) hang ;;
*) echo "fake claude: unknown scenario '$scenario'" >&2; exit 65 ;;
esac
