package backend

import (
	"bytes"
	"strings"
)

// maxActivityLine bounds the part of a line lineActivity holds while it
// waits for the line's end; the rest of a longer line is dropped.
const maxActivityLine = 4096

// lineActivity is a writer that reports each complete line written to it
// (a command agent's standard error) as the agent's activity, skipping
// blank lines and usage reports (UsageLinePrefix). proc writes it from one
// goroutine; it never fails a write.
type lineActivity struct {
	act  activity
	line []byte // the line so far, without its end
}

func (w *lineActivity) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxActivityLine - len(w.line); room > 0 {
			w.line = append(w.line, chunk[:min(len(chunk), room)]...)
		}
		if i < 0 {
			break
		}
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush reports the line held and starts the next.
func (w *lineActivity) flush() {
	line := strings.TrimSpace(strings.TrimSuffix(string(w.line), "\r"))
	w.line = w.line[:0]
	if line == "" || strings.HasPrefix(line, strings.TrimSpace(UsageLinePrefix)) {
		return
	}
	w.act.set(oneLine(line))
}
