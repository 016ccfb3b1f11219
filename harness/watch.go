package harness

import (
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// WatchControl calls changed (on a goroutine of its own) each time
// control.json of task id (in its private folder, ControlPath) is
// created, written or renamed into place, until stop is called. The controller uses it to act on pause --now during a
// turn instead of at the turn boundary.
func (s *Store) WatchControl(id string, changed func()) (stop func(), err error) {
	if err := s.checkTask(id); err != nil {
		return nil, err
	}
	dir, err := s.PrivateDir(id)
	if err != nil {
		return nil, err
	}
	return watchNames(dir, dir, "watch control requests", map[string]bool{FileControl: true}, changed)
}

// WatchTask calls changed (on a goroutine of its own) each time a file of
// task id that says how it goes (state.json, the ledger, the feature
// list, the progress log, the runner's log) is created, written or
// renamed into place, until stop is called. grub mcp uses it for
// grub_wait and its resource subscriptions; what it calls reads the
// files as grub status does.
func (s *Store) WatchTask(id string, changed func()) (stop func(), err error) {
	if err := s.checkTask(id); err != nil {
		return nil, err
	}
	dir := s.Dir(id)
	names := map[string]bool{FileState: true, FileTurnLedger: true, FileFeatureList: true, FileProgressLog: true, FileRunnerLog: true}
	return watchNames(dir, s.Rel(dir), "watch task "+id, names, changed)
}

// watchNames calls changed each time a file of folder dir named in names
// is created, written or renamed into place, until stop is called; shown
// is dir as errors name it, what the watch is for as they begin.
func watchNames(dir, shown, what string, names map[string]bool, changed func()) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", shown, err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if names[filepath.Base(ev.Name)] && ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename) != 0 {
					changed()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return func() { close(done); w.Close() }, nil
}
