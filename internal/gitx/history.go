package gitx

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// HistoryEntry is one turn commit read back from git.
type HistoryEntry struct {
	Commit    string    `json:"commit"` // abbreviated hash, 12 characters
	Time      time.Time `json:"time"`   // committer date
	TaskID    string    `json:"task_id"`
	Iteration int       `json:"iteration"`
	Feature   string    `json:"feature,omitempty"`
	Status    string    `json:"status"`
	Summary   string    `json:"summary"`
	// Verified is the Grub-Verified trailer: the feature whose flip grub
	// verified in the turn.
	Verified string `json:"verified,omitempty"`
	// CostUSD is the Grub-Cost trailer: what the turn cost; nil without one.
	CostUSD *float64 `json:"costUSD,omitempty"`
}

// History walks the history reachable from HEAD and returns the commits
// whose Grub-Task trailer is taskID (any grub task when taskID is empty),
// oldest first. It reads the repository with go-git only; a repository
// without commits has no history.
func (r *Repo) History(taskID string) ([]HistoryEntry, error) {
	g, _, err := r.open()
	if err != nil {
		return nil, err
	}
	head, err := headCommit(g)
	if err != nil || head.IsZero() {
		return nil, err
	}
	iter, err := g.Log(&git.LogOptions{From: head})
	if err != nil {
		return nil, fmt.Errorf("read the history from HEAD: %w", err)
	}
	defer iter.Close()
	var out []HistoryEntry
	err = iter.ForEach(func(c *object.Commit) error {
		e, ok := parseTurn(c.Message)
		if !ok || (taskID != "" && e.TaskID != taskID) {
			return nil
		}
		e.Commit = c.Hash.String()[:12]
		e.Time = c.Committer.When
		out = append(out, e)
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, fmt.Errorf("read the history from HEAD: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// LastTurn returns the newest commit reachable from HEAD whose Grub-Task
// trailer is taskID; ok is false when there is none. It stops at that
// commit, so it costs the commits made since (grub's recovery asks it
// whether a turn's commit was made before a crash).
func (r *Repo) LastTurn(taskID string) (e HistoryEntry, ok bool, err error) {
	g, _, err := r.open()
	if err != nil {
		return e, false, err
	}
	head, err := headCommit(g)
	if err != nil || head.IsZero() {
		return e, false, err
	}
	iter, err := g.Log(&git.LogOptions{From: head})
	if err != nil {
		return e, false, fmt.Errorf("read the history from HEAD: %w", err)
	}
	defer iter.Close()
	err = iter.ForEach(func(c *object.Commit) error {
		t, found := parseTurn(c.Message)
		if !found || t.TaskID != taskID {
			return nil
		}
		e, ok = t, true
		e.Commit = c.Hash.String()[:12]
		e.Time = c.Committer.When
		return storer.ErrStop
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return HistoryEntry{}, false, fmt.Errorf("read the history from HEAD: %w", err)
	}
	return e, ok, nil
}

// parseTurn reads a turn commit's message (see TurnMessage). ok is false
// for a commit without a Grub-Task trailer or a Grub-Iteration that is a
// whole number.
func parseTurn(msg string) (e HistoryEntry, ok bool) {
	paras := strings.Split(strings.TrimSpace(strings.ReplaceAll(msg, "\r\n", "\n")), "\n\n")
	if len(paras) < 2 {
		return e, false
	}
	trailers := map[string]string{}
	for _, line := range strings.Split(paras[len(paras)-1], "\n") {
		if k, v, found := strings.Cut(line, ":"); found && !strings.ContainsAny(k, " \t") {
			trailers[k] = strings.TrimSpace(v)
		}
	}
	e.TaskID = trailers[TrailerTask]
	if e.TaskID == "" {
		return e, false
	}
	n, err := strconv.Atoi(trailers[TrailerIteration])
	if err != nil || n < 0 {
		return e, false // not a turn grub wrote
	}
	e.Iteration = n
	e.Feature = trailers[TrailerFeature]
	e.Status = trailers[TrailerStatus]
	e.Verified = trailers[TrailerVerified]
	if usd, err := strconv.ParseFloat(trailers[TrailerCost], 64); err == nil && usd >= 0 && !math.IsInf(usd, 0) {
		e.CostUSD = &usd
	}
	if body := paras[1 : len(paras)-1]; len(body) > 0 {
		e.Summary = strings.Join(body, "\n\n") // the full summary
		return e, true
	}
	subject, _, _ := strings.Cut(paras[0], "\n")
	prefix := fmt.Sprintf("grub(%s) #%d", e.TaskID, e.Iteration)
	if e.Feature != "" {
		prefix += " " + e.Feature
	}
	if rest, found := strings.CutPrefix(subject, prefix+": "); found {
		e.Summary = rest
	} else if _, rest, found := strings.Cut(subject, ": "); found {
		e.Summary = rest
	}
	return e, true
}
