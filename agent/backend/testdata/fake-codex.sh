#!/bin/sh
# Fake Codex CLI for the codex backend's tests.
#
# It reads the prompt from stdin and records its arguments (one a line),
# its working directory and the prompt in $GRUB_HARNESS_DIR. It refuses to
# run (exit 64) unless it is called as `codex exec … -` with the flags grub
# must pass. Then it acts out the scenario named on the prompt's first
# line, printing a sample from testdata/codex.
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
if [ "$1" != exec ]; then
	echo "fake codex: the first argument is '$1', want exec" >&2
	exit 64
fi
for req in "--json=" "-c=features.goals=false" "--sandbox=workspace-write" "--skip-git-repo-check="; do
	flag=${req%%=*} value=${req#*=}
	if ! has "$flag" "$value" "$@"; then
		echo "fake codex: missing flag $flag $value" >&2
		exit 64
	fi
done
last=
for a in "$@"; do last=$a; done
if [ "$last" != - ]; then
	echo "fake codex: the last argument is '$last', want - (prompt on stdin)" >&2
	exit 64
fi

echo 'Reading prompt from stdin...' >&2
hang() {
	sleep 300 &
	echo $! > "$GRUB_HARNESS_DIR/child.pid.tmp"
	mv "$GRUB_HARNESS_DIR/child.pid.tmp" "$GRUB_HARNESS_DIR/child.pid"
	wait
}

case $scenario in
success) cat "$here/codex/success.jsonl" ;;
tools) cat "$here/codex/tools.jsonl" ;;
failed) cat "$here/codex/turn_failed.jsonl"; exit 1 ;;
usage_limit) cat "$here/codex/usage_limit.jsonl"; exit 1 ;;
reconnect) cat "$here/codex/reconnect.jsonl" ;;
stream_error) cat "$here/codex/stream_error.jsonl"; exit 1 ;;
crash)
	echo 'Error: Not logged in. Run codex login.' >&2
	exit 1 ;;
malformed) cat "$here/codex/malformed.jsonl" ;;
long_output)
	# A command whose output is longer than what grub keeps of stdout:
	# the events after it must still count.
	echo '{"type":"thread.started","thread_id":"0199a219-0000-7000-8000-000000000001"}'
	echo '{"type":"turn.started"}'
	printf '{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"yes","aggregated_output":"'
	head -c 3000000 /dev/zero | tr '\0' y
	echo '","exit_code":0,"status":"completed"}}'
	echo '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done after a long command"}}'
	echo '{"type":"turn.completed","usage":{"input_tokens":700,"cached_input_tokens":600,"output_tokens":20}}' ;;
offline)
	# An unreachable provider: Codex reconnects forever.
	cat "$here/codex/offline.jsonl"
	while :; do
		echo '{"type":"error","message":"Reconnecting... waiting for network"}'
		sleep 0.05
	done ;;
partial)
	# A turn's usage reported, then nothing until it is killed.
	head -n 2 "$here/codex/success.jsonl"
	echo '{"type":"turn.completed","usage":{"input_tokens":800,"cached_input_tokens":500,"output_tokens":30}}'
	echo '{"type":"item.started","item":{"id":"item_9","type":"command_execution","command":"bash -lc '"'"'sleep 300'"'"'","aggregated_output":"","exit_code":null,"status":"in_progress"}}'
	hang ;;
hang) hang ;;
*) echo "fake codex: unknown scenario '$scenario'" >&2; exit 65 ;;
esac
