package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Env is the environment variable that names the failpoint to die at:
// "<name>" or "<name>@<n>" (the n-th hit; the first when n is left out).
const Env = "GRUB_FAILPOINT"

// ExitCode is how a process dies at a failpoint: distinct from every exit
// code grub gives (docs/running.md, "Exit codes") and from a signal's 128+n.
const ExitCode = 86

// The steps of a turn's life where a crash leaves something different on
// disk (docs/ARCHITECTURE.md, "Crash points and what resume does").
const (
	TurnStarted   = "turn.after-start"  // awaitingTurn and the prompt are persisted
	AgentReturned = "turn.after-agent"  // the agent's turn has ended
	Verified      = "turn.after-verify" // the referee and verification are done
	// A save of state whose accepted list changed (the record of a turn
	// that flipped a feature): the change is appended to
	// accepted-list.changes.jsonl (or a new base written to
	// accepted-list.next.json), then state.json names it.
	AcceptedWritten    = "state.after-accepted-write"
	StateNamesAccepted = "state.after-naming-accepted"
	RecordSaved        = "record.after-state" // state with the decided record (recordPending) is saved
	LogAppended        = "record.after-log"   // the progress-log entry is appended
	ChecklistSaved     = "record.after-checklist"
	Committed          = "record.after-commit" // the turn's commit is made
)

// Names lists every failpoint, in the order a turn reaches them.
var Names = []string{TurnStarted, AgentReturned, Verified, AcceptedWritten, StateNamesAccepted, RecordSaved, LogAppended, ChecklistSaved, Committed}

var (
	target string // the failpoint named in Env; "" when unset
	nth    = 1    // the hit that kills
	mu     sync.Mutex
	hits   int
)

func init() { target, nth = parse(os.Getenv(Env)) }

// parse reads Env's value: "name" or "name@n".
func parse(v string) (name string, n int) {
	name, count, ok := strings.Cut(strings.TrimSpace(v), "@")
	n = 1
	if ok {
		if c, err := strconv.Atoi(count); err == nil && c > 0 {
			n = c
		}
	}
	return name, n
}

// Hit kills the process with ExitCode when name is the failpoint Env
// names and this is the hit it counts to; otherwise it does nothing.
func Hit(name string) {
	if target == "" || name != target {
		return
	}
	mu.Lock()
	hits++
	h := hits
	mu.Unlock()
	if h != nth {
		return
	}
	fmt.Fprintf(os.Stderr, "grub: failpoint %s: exiting with %d\n", name, ExitCode)
	os.Exit(ExitCode)
}
