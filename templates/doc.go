// Package templates owns the text of the files grub writes into a task's
// harness folder (.grub/<id>/): the init.sh starter, the progress-log header
// and per-turn entries, and the feature checklist. The templates are embedded
// files rendered with text/template.
//
// It is a leaf: it imports only the standard library and loopstate (another
// leaf, for the status a progress-log entry records). Callers convert their
// own types (the feature list, the task state) into the plain structs here.
package templates
