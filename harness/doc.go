// Package harness owns a workspace's task store, the .grub/<id>/ folders,
// and is the only package that knows the names and paths of the files in
// them. It creates tasks, reads and writes state.json (always validated
// against its schema, always written atomically), appends to the progress
// log and to the turn ledger (turns.jsonl, one schema-checked JSON line per
// turn, appended without following links), renders the feature checklist, reads and restores the feature list
// and init.sh the agent edits, writes each turn's prompt and names its
// transcript and spill folder, lists the files the agent's tools must
// protect, holds the per-task advisory lock, and queues and watches the
// control requests (pause, stop, edit, steer, …) that other grub processes
// send to a running controller. Every file it replaces goes through
// internal/atomicfile, the one atomic writer; the two append-only files
// (progress log, ledger) are appended to and fsynced.
//
// Every path it stores in a file or shows to a user is relative to the
// workspace root (Store.Rel), so a harness committed to git can be resumed
// elsewhere.
//
// It may import the standard library, golang.org/x/sys, fsnotify, and
// grub's schemas, featurelist, loopstate, templates and internal/atomicfile
// packages; nothing else of grub.
package harness
