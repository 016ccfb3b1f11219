package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxWait bounds grub_wait's seconds; pollEvery is how often a wait or a
// subscription reads the task again when no file event came (a runner
// that ends releases its lock without writing a file).
const (
	maxWait   = 600
	pollEvery = 500 * time.Millisecond
)

// statusOf runs grub status --json for the call's task.
func (s *server) statusOf(ctx context.Context, ws string, id []string) (map[string]any, *mcp.CallToolResult) {
	r := s.run(ctx, ws, append([]string{"status", "--json"}, id...)...)
	if r.Code != 0 {
		return nil, failure(r)
	}
	obj, err := jsonObject(r.Stdout)
	if err != nil {
		return nil, toolError(err.Error(), 1)
	}
	return obj, nil
}

// wait is grub_wait: it reads the task as grub status --watch does,
// when its files change (the harness's watch) and every pollEvery, until
// its status or whether a runner holds it changes, or seconds pass.
func (s *server) wait(ctx context.Context, req *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	secs, err := c.args.number("seconds", 60)
	if err != nil || secs <= 0 || secs > maxWait {
		return toolError(fmt.Sprintf("grub_wait: seconds must be a number above 0 and at most %d", maxWait), 2)
	}
	first, fail := s.statusOf(ctx, c.ws, rest)
	if fail != nil {
		return fail
	}
	if first["running"] != true {
		return waited(first, "not running", false)
	}
	id, _ := first["id"].(string)
	rest = []string{id}
	kick := make(chan struct{}, 1)
	if stop, err := s.g.Watch(c.ws, id, func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}); err == nil {
		defer stop()
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	deadline := time.NewTimer(time.Duration(secs * float64(time.Second)))
	defer deadline.Stop()
	token := req.Params.GetProgressToken()
	var last string
	n := 0
	for {
		select {
		case <-ctx.Done():
			return toolError("grub_wait: cancelled", 130)
		case <-deadline.C:
			now, fail := s.statusOf(ctx, c.ws, rest)
			if fail != nil {
				return fail
			}
			return waited(now, "timed out", false)
		case <-kick:
		case <-tick.C:
		}
		now, fail := s.statusOf(ctx, c.ws, rest)
		if fail != nil {
			return fail
		}
		if now["status"] != first["status"] || now["running"] != first["running"] {
			return waited(now, "changed", true)
		}
		if msg := progressMessage(now, s.runnerLine(c.ws, now)); token != nil && msg != last {
			last, n = msg, n+1
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
		}
	}
}

func waited(st map[string]any, why string, changed bool) *mcp.CallToolResult {
	text := fmt.Sprintf("task %v: %v (%s)", st["id"], st["status"], why)
	if st["running"] == true {
		text = fmt.Sprintf("task %v: %v, running (%s)", st["id"], st["status"], why)
	}
	return result(map[string]any{"changed": changed, "reason": why, "status": st}, text)
}

// progressMessage says where the task is: its turn, features, last turn
// and the runner's last line (what it reports the agent does).
func progressMessage(st map[string]any, runner string) string {
	msg := fmt.Sprintf("turn %v/%v (%v)", st["iteration"], st["maxIterations"], st["phase"])
	if f, ok := st["features"].(map[string]any); ok {
		msg += fmt.Sprintf(", %v/%v features pass", f["passing"], f["total"])
	}
	if lt, ok := st["lastTurn"].(map[string]any); ok {
		if f, ok := lt["feature"].(string); ok && f != "" {
			msg += fmt.Sprintf("; last turn #%v on %s", lt["iteration"], f)
		}
	}
	if runner != "" {
		msg += "; " + runner
	}
	return msg
}

// runnerLine is the last line of a detached runner's log ("" without
// one): the runner's latest progress line.
func (s *server) runnerLine(ws string, st map[string]any) string {
	h, _ := st["harness"].(string)
	if h == "" {
		return ""
	}
	if !filepath.IsAbs(h) {
		h = filepath.Join(ws, h)
	}
	f, err := os.Open(filepath.Join(h, s.g.RunnerLog))
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4096
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		_, _ = f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tail))
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(bytes.TrimPrefix(b, []byte("grub: ")))
}
