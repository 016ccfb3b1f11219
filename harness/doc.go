// Package harness owns a workspace's task store: the .grub/<id>/ folders of
// DESIGN.md section 2. It creates tasks, reads and writes state.json (always
// validated against its schema, always written atomically), appends to the
// progress log, renders the feature checklist, holds the per-task advisory
// lock, and queues the control requests (pause, stop, edit, steer, …) that
// other grub processes send to a running controller.
//
// Every path it stores in a file or shows to a user is relative to the
// workspace root (Store.Rel), so a harness committed to git can be resumed
// elsewhere.
//
// It may import the standard library, golang.org/x/sys, and grub's schemas,
// featurelist and templates packages; nothing else of grub.
package harness
