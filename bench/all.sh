#!/bin/sh
# make bench: what grub's own work costs, against tools doing the same
# work, in one table (the figures of docs/performance.md).
#
#   1. grub status --json on 2,000 features and a 50 MB progress log,
#      against jq counting the passing features of the same list
#   2. grub's work per turn (BenchmarkTurn: referee, init.sh and verify,
#      the regression sweep's three rechecks, the record guard, the
#      history and process checks, record, commit; the in-process fake
#      agent's time left out) at 10 and 2,000 features,
#      against a shell loop running the same init.sh, the same four checks
#      and git add -A && git commit
#   3. the execution prompt's size at 2,000 features against 10
#   4. grub's peak memory (VmHWM) over a run of 2,000 features and over a
#      turn whose agent prints 80 MB
#   5. the completion audit of 2,000 features whose checks are `true`
#      (BenchmarkCompletionAudit: init.sh, then the checks several at
#      once, without the sandbox launcher), against a shell loop running the same init.sh and checks one
#      after another
#   6. one sandboxed launch against sh -c true (with and without a
#      network namespace), and 40 turns with the default sandbox against
#      --sandbox off and a shell loop
#   7. 100 requests to a loopback server through the network allowlist's
#      proxy (BenchmarkRatio in internal/netproxy): HTTPS over a CONNECT
#      tunnel and plain HTTP forwarded, each against the same requests
#      sent directly, in turn
#
# The machine is shared: every time is the best of RUNS runs (default 7).
#   bench/all.sh            TURNS=20 TRIES=5 RUNS=7 bench/all.sh
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
TURNS=${TURNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/grub" ./cmd/grub
go build -o "$tmp/mkfixture" ./bench/mkfixture
grub=$tmp/grub

now() { date +%s%N; }
# best RUNS CMD...: the shortest wall time of RUNS runs, in ms.
best() {
	n=$1; shift; b=
	for _ in $(seq "$n"); do
		s=$(now); "$@" >/dev/null 2>&1; e=$(now)
		t=$(( (e - s) / 1000 ))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
	done
	awk -v us="$b" 'BEGIN { printf "%.1f", us / 1000 }'
}
# peak CMD...: grub's peak resident memory (VmHWM) in MB, read from
# /proc while it runs (the last reading before it exits).
peak() {
	"$@" >"$tmp/peak.out" 2>&1 &
	pid=$!; hwm=0
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$v" ] && hwm=$v
		sleep 0.02
	done
	wait "$pid" || true
	grep -E 'stopped|complete|budget|error' "$tmp/peak.out" | tail -1 >&2 || true
	awk -v kb="$hwm" 'BEGIN { printf "%.1f", kb / 1024 }'
}
gitc() { d=$1; shift; git -C "$d" -c user.name=bench -c user.email=bench@example.com "$@"; }
repo() { # repo DIR: a git repository of what DIR holds
	git -C "$1" init -q && git -C "$1" add -A &&
		git -C "$1" -c user.name=bench -c user.email=bench@example.com commit -qm fixture
}

# 1. status against jq.
st=$tmp/status
id=$("$tmp/mkfixture" -features 2000 -log 50000000 "$st")
status_ms=$(cd "$st" && best "$RUNS" "$grub" status --json "$id")
if ! command -v jq >/dev/null 2>&1; then
	(apt-get install -y jq >/dev/null 2>&1) || true
fi
if command -v jq >/dev/null 2>&1; then
	jq_ms=$(best "$RUNS" jq '[.features[] | select(.passes)] | length' "$st/.grub/$id/feature-list.json")
	status_ratio=$(awk -v a="$status_ms" -v b="$jq_ms" 'BEGIN { printf "%.1f×", a / b }')
else
	jq_ms="skipped: jq is not installed and apt-get could not install it"
	status_ratio="-"
fi

# 2. a turn: grub's own work (Go benchmark) against a shell loop.
# Each side is measured TRIES times (default 5), one grub run then one
# loop run, and the best of each kept: a turn's time is mostly the disk,
# which is shared, so the two sides take turns rather than one after the
# other.
TRIES=${TRIES:-5}
go test -c -o "$tmp/cli.test" ./internal/cli
# turns SIZE: the best grub and loop ms per turn at SIZE features, and
# the prompt's bytes, as "GRUB LOOP PROMPT".
turns() {
	gb= lb= pb=
	for k in $(seq "$TRIES"); do
		o=$(cd internal/cli && "$tmp/cli.test" -test.run '^$' -test.bench "BenchmarkTurn/features=$1\$" -test.benchtime "${TURNS}x")
		printf '%s\n' "$o" >>"$tmp/turns.out"
		g=$(printf '%s\n' "$o" | awk '/^BenchmarkTurn/ { for (i = 3; i < NF; i++) if ($(i + 1) == "grub-ms/turn") print $i }')
		pb=$(printf '%s\n' "$o" | awk '/^BenchmarkTurn/ { for (i = 3; i < NF; i++) if ($(i + 1) == "prompt-B") print $i }')
		l=$(loop1 "$1" "$k")
		gb=$(least "$gb" "$g"); lb=$(least "$lb" "$l")
	done
	printf '%s %s %s' "$gb" "$lb" "$pb"
}
# least A B: the smaller of two numbers (A may be empty).
least() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b + 0 < a + 0) print b; else print a }'; }
# loop1 SIZE K: one measured loop of TURNS turns in a fresh fixture.
loop1() {
	d=$tmp/loop$1-$2
	lid=$("$tmp/mkfixture" -features "$1" -passing $(($1 / 2)) "$d")
	repo "$d"
	total=0
	for i in $(seq $(($1 / 2 + 1)) $(($1 / 2 + TURNS))); do
		f=feature-$i
		: >"$d/$f.done"
		awk -v id="\"id\": \"$f\"," '
			index($0, id) { hit = 1 }
			hit && /"passes": false/ { sub(/"passes": false/, "\"passes\": true"); hit = 0 }
			{ print }' "$d/.grub/$lid/feature-list.json" >"$tmp/list" && cp "$tmp/list" "$d/.grub/$lid/feature-list.json"
		s=$(now)
		bash "$d/.grub/$lid/init.sh" >/dev/null
		(cd "$d" && sh -c "test -f $f.done")
		# the regression sweep's default: three more passing features' checks
		for k in 1 2 3; do (cd "$d" && sh -c "test -f feature-$k.done"); done
		gitc "$d" add -A
		gitc "$d" commit -qm "turn $i"
		e=$(now)
		total=$((total + (e - s) / 1000))
	done
	awk -v us="$total" -v n="$TURNS" 'BEGIN { printf "%.1f", us / n / 1000 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f×", a / b }'; }
set -- $(turns 10); g10=$1 l10=$2 p10=$3
set -- $(turns 2000); g2k=$1 l2k=$2 p2k=$3
grep '^BenchmarkTurn' "$tmp/turns.out"
echo

# 4. peak memory: a 2,000-feature run of 3 turns with the fake agent, and
# one turn whose agent prints 80 MB.
run=$tmp/run
rid=$("$tmp/mkfixture" -features 2000 -agent "$grub demo-agent" "$run")
repo "$run"
run_mb=$(cd "$run" && peak "$grub" resume "$rid" --max-iter 1004)
big=$tmp/big
cat >"$tmp/loud.sh" <<'SH'
#!/bin/sh
head -c 80000000 /dev/zero | tr '\0' x
echo
echo '<loop-state>{"status":"continue","summary":"printed 80 MB","nextStep":"carry on"}</loop-state>'
SH
chmod +x "$tmp/loud.sh"
bid=$("$tmp/mkfixture" -features 10 -agent "$tmp/loud.sh" "$big")
repo "$big"
loud_mb=$(cd "$big" && peak "$grub" resume "$bid" --max-iter 7)

# 5. the completion audit against a shell loop (best of AUDIT_RUNS, default 3).
AUDIT_RUNS=${AUDIT_RUNS:-3}
go test -c -o "$tmp/controller.test" ./controller
audit_ms= audit_loop_ms=
aw=$tmp/audit
mkdir -p "$aw"
printf '#!/usr/bin/env bash\necho smoke check\n' >"$aw/init.sh"
audit_loop() { # the same checks, one after another, as a shell runs them
	cd "$aw" && bash init.sh >/dev/null && i=0
	while [ "$i" -lt 2000 ]; do sh -c true; i=$((i + 1)); done
}
for _ in $(seq "$AUDIT_RUNS"); do
	o=$(cd controller && "$tmp/controller.test" -test.run '^$' -test.bench '^BenchmarkCompletionAudit$' -test.benchtime 1x)
	printf '%s\n' "$o" | grep '^BenchmarkCompletionAudit' >&2 || true
	g=$(printf '%s\n' "$o" | awk '/^BenchmarkCompletionAudit/ { for (i = 3; i < NF; i++) if ($(i + 1) == "audit-ms") print $i }')
	s=$(now); (audit_loop); e=$(now)
	audit_ms=$(least "$audit_ms" "$g")
	audit_loop_ms=$(least "$audit_loop_ms" "$(awk -v us="$(( (e - s) / 1000 ))" 'BEGIN { printf "%.1f", us / 1000 }')")
done

# 6. the sandbox's cost: one launch of `true` through grub's launcher
# against sh -c true (bench/launch: paired rounds, LAUNCH_RUNS, default
# 100), and 40 turns of a task whose agent is the demo agent with the
# default sandbox (workspace-write: the agent, init.sh, the verify
# command and the sweep's three rechecks each through the launcher)
# against the same task with --sandbox off and a shell loop doing the
# turns' work (the same demo agent, init.sh, the four checks, git add -A
# && git commit) without a sandbox; best of TRIES for each, taking turns.
go build -o "$tmp/launch" ./bench/launch
lo=$("$tmp/launch" -grub "$grub" -n "${LAUNCH_RUNS:-100}" "$tmp/launchdir")
printf '%s\n' "$lo" >&2
field() { printf '%s\n' "$lo" | awk -v n="$1" -v f="$2" '$1 == n { for (i = 2; i < NF; i++) if ($i == f) print $(i + 1) }'; }
sh_ms=$(field sh median-ms) one_ms=$(field one-stage median-ms) one_ratio=$(field one-stage ratio)
two_ms=$(field two-stage median-ms) two_ratio=$(field two-stage ratio)
ll_ms=$(field landlock median-ms) ll_ratio=$(field landlock ratio)
net_ms=$(field netns median-ms) net_ratio=$(field netns ratio)
# run40 SANDBOX K: ms for 40 turns of grub resume on a fresh fixture.
run40() {
	d=$tmp/run40-$1-$2
	rid=$("$tmp/mkfixture" -features 100 -passing 50 -agent "$grub demo-agent" "$d")
	repo "$d"
	(cd "$d" && "$grub" config trust --task "$rid" >/dev/null 2>&1)
	s=$(now); (cd "$d" && "$grub" resume "$rid" --max-iter 91 --sandbox "$1" >/dev/null 2>&1) || true; e=$(now)
	[ "$(git -C "$d" rev-list --count HEAD)" = 41 ] || echo "run40 $1: not 40 turns" >&2
	echo $(( (e - s) / 1000000 ))
}
# loop40 K: ms for the same 40 turns as a shell loop, without a sandbox.
loop40() {
	d=$tmp/loop40-$1
	lid=$("$tmp/mkfixture" -features 100 -passing 50 "$d")
	repo "$d"
	s=$(now)
	for i in $(seq 51 90); do
		f=feature-$i
		(cd "$d" && echo "turn $i" | GRUB_HARNESS_DIR="$d/.grub/$lid" GRUB_PHASE=execution GRUB_TASK_ID="$lid" \
			GRUB_ITERATION="$i" GRUB_PROMPT_FILE=/dev/null "$grub" demo-agent >/dev/null)
		bash "$d/.grub/$lid/init.sh" >/dev/null
		(cd "$d" && sh -c "test -f $f.done")
		for k in 1 2 3; do (cd "$d" && sh -c "test -f feature-$k.done"); done
		gitc "$d" add -A
		gitc "$d" commit -qm "turn $i"
	done
	e=$(now)
	echo $(( (e - s) / 1000000 ))
}
r40= o40= l40=
for k in $(seq "$TRIES"); do
	r40=$(least "$r40" "$(run40 default "$k")")
	o40=$(least "$o40" "$(run40 off "$k")")
	l40=$(least "$l40" "$(loop40 "$k")")
done
# 7. the network proxy against direct requests: BenchmarkRatio sends the
# same requests both ways in turn; the median of 3 runs of 200 rounds.
go test -c -o "$tmp/netproxy.test" ./internal/netproxy
px=$("$tmp/netproxy.test" -test.run '^$' -test.bench '^BenchmarkRatio$' -test.benchtime 200x -test.count 3)
px_ratio() { # px_ratio UNIT: the median of the runs' UNIT metric
	printf '%s\n' "$px" | awk -v u="$1" '/^BenchmarkRatio/ { for (i = 3; i < NF; i++) if ($(i + 1) == u) print $i }' |
		sort -n | awk '{ v[NR] = $1 } END { printf "%.2f×", v[int((NR + 1) / 2)] }'
}
px_connect=$(px_ratio connect/direct) px_plain=$(px_ratio proxy/direct)

printf '| measure | grub | reference | ratio | goal |\n|---|---|---|---|---|\n'
printf '| status --json, 2,000 features, 50 MB log (ms) | %s | jq: %s | %s | ≤ 2× |\n' "$status_ms" "$jq_ms" "$status_ratio"
printf '| grub work per turn, 10 features (ms) | %s | shell loop: %s | %s | ≤ 1.5× |\n' "$g10" "$l10" "$(ratio "$g10" "$l10")"
printf '| grub work per turn, 2,000 features (ms) | %s | shell loop: %s | %s | ≤ 1.5× |\n' "$g2k" "$l2k" "$(ratio "$g2k" "$l2k")"
printf '| execution prompt, 2,000 vs 10 features (bytes) | %s | %s | %s | ≤ 1.1× |\n' "$p2k" "$p10" "$(ratio "$p2k" "$p10")"
printf '| peak memory, 2,000-feature run of 3 turns (MB) | %s | | | < 100 |\n' "$run_mb"
printf '| peak memory, a turn whose agent prints 80 MB (MB) | %s | | | < 100 |\n' "$loud_mb"
printf '| completion audit, 2,000 features checked by `true` (ms) | %s | shell loop: %s | %s | ≤ 0.7× |\n' "$audit_ms" "$audit_loop_ms" "$(ratio "$audit_ms" "$audit_loop_ms")"
printf '| one sandboxed launch of true, as grub starts it (ms, median) | %s | sh -c true: %s | %s× | ≤ 5× |\n' "$one_ms" "$sh_ms" "$one_ratio"
printf '| the same, the launcher making its namespace itself (ms, median) | %s | sh -c true: %s | %s× | |\n' "$two_ms" "$sh_ms" "$two_ratio"
printf '| the same, Landlock alone, no namespace (ms, median) | %s | sh -c true: %s | %s× | |\n' "$ll_ms" "$sh_ms" "$ll_ratio"
printf '| the same as grub starts it with --no-network, in a network namespace too (ms, median) | %s | sh -c true: %s | %s× | |\n' "$net_ms" "$sh_ms" "$net_ratio"
printf '| 40 turns, default sandbox (ms) | %s | shell loop: %s | %s | ≤ 1.3× |\n' "$r40" "$l40" "$(ratio "$r40" "$l40")"
printf '| 40 turns, --sandbox off (ms) | %s | shell loop: %s | %s | |\n' "$o40" "$l40" "$(ratio "$o40" "$l40")"
printf '| 100 HTTPS requests through the proxy (CONNECT) against direct | | | %s | ≤ 1.3× |\n' "$px_connect"
printf '| 100 plain HTTP requests through the proxy against direct | | | %s | |\n' "$px_plain"
