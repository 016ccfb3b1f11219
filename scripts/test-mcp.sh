#!/usr/bin/env bash
# make test-mcp: checks grub mcp with an MCP client nobody here wrote, the
# official MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned
# below), installed from npm into a cache folder on the first run. Each
# step starts `grub mcp` afresh over stdio, as a client reconnecting
# would; the agent is grub's FAKE agent (grub demo-agent), set in the
# user's config file of a temporary home, so nothing leaves the machine
# but the npm install.
#
#   GRUB_MCP_TEST_DIR   the cache folder (default: $XDG_CACHE_HOME/grub/mcp-inspector,
#                       or ./.cache/mcp-inspector when XDG_CACHE_HOME is unset)
#   INSPECTOR_VERSION   the @modelcontextprotocol/inspector version (default below)
#   GRUB                the grub binary to check (default: bin/grub, built here)
set -euo pipefail

INSPECTOR_VERSION=${INSPECTOR_VERSION:-2.12.0}
if [ -n "${XDG_CACHE_HOME:-}" ]; then
	default_dir=$XDG_CACHE_HOME/grub/mcp-inspector
else
	default_dir=$(pwd)/.cache/mcp-inspector
fi
dir=${GRUB_MCP_TEST_DIR:-$default_dir}
command -v npm >/dev/null || { echo "test-mcp: npm is needed (Node.js 20 or later)" >&2; exit 1; }

pkg=$dir/node_modules/@modelcontextprotocol/inspector/package.json
if [ -f "$pkg" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$pkg" "$INSPECTOR_VERSION"; then
	echo "test-mcp: MCP Inspector $INSPECTOR_VERSION already in $dir" >&2
else
	mkdir -p "$dir"
	echo "test-mcp: installing MCP Inspector $INSPECTOR_VERSION into $dir" >&2
	npm install --prefix "$dir" --no-fund --no-audit --no-save "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2
fi
inspector=$dir/node_modules/.bin/mcp-inspector

grub=${GRUB:-}
if [ -z "$grub" ]; then
	go build -o bin/grub ./cmd/grub
	grub=$(pwd)/bin/grub
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The Inspector starts the server with a few variables only (HOME, PATH,
# …): grub's config and private folders are the defaults under HOME.
export HOME=$tmp/home
unset XDG_CONFIG_HOME XDG_STATE_HOME
mkdir -p "$HOME/.config/grub" "$tmp/ws"
printf 'agent = "command"\nagent-cmd = "%s demo-agent -features 2 -default slow -sleep 4s"\nmin-features = 2\n' "$grub" >"$HOME/.config/grub/config.toml"
cd "$tmp/ws"

# mcp METHOD [ARGS...]: the Inspector's CLI against a fresh grub mcp; its
# JSON result on stdout.
mcp() {
	local method=$1
	shift
	"$inspector" --cli "$grub" mcp --method "$method" "$@"
}
# mcp_error is mcp for a call that must be a tool error, which the CLI
# reports with a non-zero exit (and a line on stderr, left out).
mcp_error() {
	if mcp "$@" 2>/dev/null; then
		echo '{"isError": false}'
	fi
}
# check JS-EXPRESSION WHAT: the expression over the JSON on stdin (r) must be true.
check() {
	node -e '
		let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
			const r = JSON.parse(s);
			if (!('"$1"')) { console.error("test-mcp: FAIL: " + process.argv[1] + "\n" + s); process.exit(1); }
			console.error("test-mcp: ok: " + process.argv[1]);
		});' "$2"
}

mcp tools/list | check '["grub_start","grub_status","grub_list","grub_log","grub_report","grub_history","grub_wait","grub_steer","grub_answer","grub_pause","grub_resume","grub_stop","grub_edit"].every(n => r.tools.some(t => t.name === n && t.inputSchema.type === "object"))' "tools/list names every tool, each with an object schema"
mcp resources/templates/list | check '["status","features","report"].every(k => r.resourceTemplates.some(t => t.uriTemplate === "grub://tasks/{id}/" + k))' "resources/templates/list names the three task resources"
mcp_error tools/call --tool-name grub_start --tool-arg goal=g --tool-arg sandbox=off | check 'r.isError && r.content[0].text.includes("--allow-unsafe-options")' "a start that turns the sandbox off is refused"
mcp_error tools/call --tool-name grub_status --tool-arg id=ffffffff | check 'r.isError && r.content[0].text.startsWith("grub: no grub task")' "an unknown task is the CLI's error"

out=$(mcp tools/call --tool-name grub_start --tool-arg 'goal=make marker files')
echo "$out" | check 'r.structuredContent.id.length === 8 && r.structuredContent.status.running === true' "grub_start starts a task that runs"
id=$(echo "$out" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).structuredContent.id))')
mcp tools/call --tool-name grub_steer --tool-arg id="$id" --tool-arg 'message=prefer small commits' | check '!r.isError' "grub_steer takes guidance"
for _ in 1 2 3 4 5 6; do
	out=$(mcp tools/call --tool-name grub_wait --tool-arg id="$id")
	if echo "$out" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const st=JSON.parse(s).structuredContent.status;process.exit(st.running?1:0)})'; then
		break
	fi
done
echo "$out" | check 'r.structuredContent.status.status === "complete"' "grub_wait returns once the task is complete"
mcp tools/call --tool-name grub_report --tool-arg id="$id" | check 'r.content[0].text.includes("feature-2")' "grub_report is the Markdown report"
mcp tools/call --tool-name grub_list | check 'r.structuredContent.tasks.some(t => t.id === "'"$id"'")' "grub_list lists the task"
mcp resources/read --uri "grub://tasks/$id/status" | check 'JSON.parse(r.contents[0].text).status === "complete"' "the status resource reads"
mcp resources/read --uri "grub://tasks/$id/features" | check 'JSON.parse(r.contents[0].text).passing === 2' "the features resource reads"
echo "test-mcp: grub mcp passed every check of MCP Inspector $INSPECTOR_VERSION's CLI" >&2
