// Package tools owns the tools of grub's built-in agent (the openai
// backend in agent/backend): shell, read_file, write_file, edit_file,
// list_files, glob and grep.
//
// Each tool is one file: a params struct whose json and description tags
// generate the JSON Schema the model sees (schemaFor), a description
// embedded from the .md file next to it and rendered with the caps the code
// applies, and a constructor taking the Config it depends on. All builds
// them in a stable order, so that the tool list sent with every request of a
// task is byte-identical.
//
// Two error channels: a mistake of the model (a bad path, no unique match,
// a timeout, a malformed pattern) is a Result with IsError set and a nil Go
// error, and goes back to the model; a Go error means the machinery failed
// (the workspace is gone, a spill file cannot be written) or the context
// was cancelled.
//
// Every path parameter is confined to the workspace: relative paths start at
// its root, absolute ones must lie inside it, ".." may not leave it, and
// symbolic links are resolved and refused when they lead outside. The
// protected files of every task's harness folder (<TasksDir>/<id>/<name>
// for each name in Config.Protected, the names the harness package gives)
// can be neither read nor written, and list_files, glob and grep do not
// enter the task folders' Config.Skipped folders (transcripts and spilled
// outputs). The tools spell none of these names.
// The shell is the exception: it runs commands in the workspace root but
// cannot stop them from reaching elsewhere.
//
// A result longer than Config.InlineLimit is written whole to a new file in
// Config.SpillDir, and the model gets its head and tail, its size and the
// path to read the rest with read_file (spill.go).
//
// tools may import the standard library, internal/proc and
// internal/atomicfile (the one atomic writer, used by write_file and
// edit_file) only.
package tools
