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
// symbolic links are resolved and refused when they lead outside, naming
// the link. grub's own folders (the tasks folder, a task folder, its
// Config.Skipped folders, and a spill folder configured outside the
// workspace) are never followed through a link, wherever it points: the
// agent can replace them with links from its shell. The outside spill
// folder is known by its parent's real path, resolved once when the tools
// are built, so a link planted in its place later never widens what may be
// read.
//
// resolve only checks a path; the tools never use it by name afterwards,
// since the agent's shell (or a process it left running for the turn) can
// swap a folder on the way for a link between the check and the use.
// read_file, write_file and edit_file reach the file through an os.Root
// opened on the workspace root (or the outside spill folder's parent),
// entering the checked path one folder at a time (inroot.go): each must be
// a real folder, no link even one staying inside, and the very folder
// opened, checked again after the opening, or the call is refused as
// swapped. The file is opened in its folder's root and checked the same
// way, and written with atomicfile.WriteFileIn in that root: the temp file
// created O_EXCL, renamed over the name (a link swapped in there is
// replaced, never written through). edit_file reads and writes through the
// same root. So a write never leaves the workspace, never reaches a
// protected file or passes through grub's own folders by a link swapped in
// since the check. (A folder moved whole after it was entered takes the
// write with it, as any open folder does: nothing the shell cannot do by
// moving folders itself.) list_files, glob and grep still walk by path and open
// files without following a link in place of the last element (reads are
// not confined by the sandbox anyway: the shell can read them). The
// protected files of every task's harness folder
// (<TasksDir>/<id>/<name> for each name in Config.Protected, the names the
// harness package gives) can be neither read nor written, and list_files,
// glob and grep do not enter the task folders' Config.Skipped folders
// (transcripts and spilled outputs). The tools spell none of these names.
// The shell is the exception: it runs commands in the workspace root but
// cannot stop them from reaching elsewhere.
//
// A result longer than Config.InlineLimit is written whole to a new file in
// Config.SpillDir, and the model gets its head and tail, its size and the
// path to read the rest with read_file (spill.go). Spill files are made
// without following links: the spill folder is reached through an os.Root
// (the workspace, or the folder's parent when it lies outside), a link in
// place of grub's own folders is replaced by a real folder, and files are
// created with O_EXCL|O_NOFOLLOW, never overwritten. The tools of one All
// (one turn) share a spill budget, Config.SpillCap (DefaultSpillCap, 256
// MiB); a result past it is not written, and the model gets its head and
// tail with a note saying the rest is lost.
//
// The shell never holds a whole output: proc keeps at most shellKeep bytes
// of the head and tail of each stream in memory, and tees both streams to a
// shellSpill (stream.go), which keeps a stream in memory while it is within
// the inline limit and past it writes it to a part file as it arrives. Once
// the command is over the parts are copied (copy_file_range) into the spill
// file, in the format of a small result, and the model gets its head and
// tail read back from the file; a stream cut at the spill cap keeps its
// saved head, a note of the bytes dropped and the tail proc kept. 80 MB
// printed costs about 2 MB of allocation (BenchmarkShellHugeOutput).
//
// tools may import the standard library, internal/proc and
// internal/atomicfile (the one atomic writer, used by write_file and
// edit_file through WriteFileIn) only.
package tools
