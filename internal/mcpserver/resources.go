package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The task resources: grub://tasks/{id}/status (grub status --json),
// …/features (the features of grub report --format json) and …/report
// (grub report --format md), in the server's workspace.
const taskPrefix = "grub://tasks/"

var taskResources = []struct {
	name, mime, desc string
}{
	{"status", "application/json", "the task's status, as grub status --json prints it"},
	{"features", "application/json", "the task's features: passing and total, and each feature with its state (grub report --format json's features)"},
	{"report", "text/markdown", "the task's report in Markdown (grub report --format md)"},
}

func (s *server) addResources() {
	for _, r := range taskResources {
		s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
			Name:        "task-" + r.name,
			Title:       "grub task " + r.name,
			Description: r.desc + "; subscribe to be told when the task's state changes",
			MIMEType:    r.mime,
			URITemplate: taskPrefix + "{id}/" + r.name,
		}, s.readResource)
	}
}

// taskURI splits grub://tasks/<id>/<what>.
func taskURI(uri string) (id, what string, ok bool) {
	rest, found := strings.CutPrefix(uri, taskPrefix)
	if !found {
		return "", "", false
	}
	id, what, ok = strings.Cut(rest, "/")
	return id, what, ok && id != "" && !strings.Contains(what, "/")
}

func (s *server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, what, ok := taskURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var (
		r    Result
		mime = "application/json"
	)
	switch what {
	case "status":
		r = s.run(ctx, s.g.Workspace, "status", id, "--json")
	case "features":
		r = s.run(ctx, s.g.Workspace, "report", id, "--format", "json")
	case "report":
		r, mime = s.run(ctx, s.g.Workspace, "report", id, "--format", "md"), "text/markdown"
	default:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if r.Code != 0 {
		return nil, errors.New(strings.TrimSpace(r.Stderr))
	}
	text := r.Stdout
	if what == "features" {
		var rep struct {
			Features json.RawMessage `json:"features"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			return nil, err
		}
		text = string(rep.Features)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
}

// taskWatch follows one task for its subscribers: when its status (grub
// status --json, without its clock-dependent fields) changes, every
// resource of the task is said to be updated.
type taskWatch struct {
	uris map[string]int // subscribed URIs and their subscriptions
	stop func()
}

func (s *server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	id, _, ok := taskURI(req.Params.URI)
	if !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	// The task must exist: the same check, and words, as grub status.
	if r := s.run(ctx, s.g.Workspace, "status", id, "--json"); r.Code != 0 {
		return errors.New(strings.TrimSpace(r.Stderr))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := taskPrefix + id
	w := s.watches[key]
	if w == nil {
		w = &taskWatch{uris: map[string]int{}}
		w.stop = s.follow(id)
		s.watches[key] = w
	}
	w.uris[req.Params.URI]++
	return nil
}

func (s *server) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	id, _, ok := taskURI(req.Params.URI)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := taskPrefix + id
	w := s.watches[key]
	if w == nil {
		return nil
	}
	if w.uris[req.Params.URI]--; w.uris[req.Params.URI] <= 0 {
		delete(w.uris, req.Params.URI)
	}
	if len(w.uris) == 0 {
		w.stop()
		delete(s.watches, key)
	}
	return nil
}

// follow reads task id's status when its files change and every
// pollEvery, and notifies the subscribers of its resources when it
// changed, until the returned stop is called.
func (s *server) follow(id string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	kick := make(chan struct{}, 1)
	stopWatch, err := s.g.Watch(s.g.Workspace, id, func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	})
	if err != nil {
		stopWatch = func() {}
	}
	go func() {
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		last := s.stateKey(ctx, id)
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
			case <-tick.C:
			}
			key := s.stateKey(ctx, id)
			if key == last {
				continue
			}
			last = key
			for _, r := range taskResources {
				_ = s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: taskPrefix + id + "/" + r.name})
			}
		}
	}()
	return func() { cancel(); stopWatch() }
}

// stateKey is what a change of the task's state changes: its status
// output without the fields that move with the clock alone.
func (s *server) stateKey(ctx context.Context, id string) string {
	r := s.run(ctx, s.g.Workspace, "status", id, "--json")
	if r.Code != 0 {
		return "error: " + r.Stderr
	}
	var m map[string]any
	if json.Unmarshal([]byte(r.Stdout), &m) != nil {
		return r.Stdout
	}
	delete(m, "runner") // its age
	if u, ok := m["usage"].(map[string]any); ok {
		delete(u, "elapsedSeconds")
	}
	b, _ := json.Marshal(m)
	return string(b)
}
