// Package launch runs grub's sandbox launcher before the rest of grub
// initialises. cmd/grub imports it for its side effect: when grub is
// started as `grub __sandbox-exec …` ([sandbox.ExecCommand]), the
// package's initialiser runs [sandbox.Main], which execs the command, and
// the process never gets to the initialisers of the packages the launcher
// does not need (the JSON Schema library's compiled meta-schemas, go-git,
// net/http, cobra: about 6 ms of a 8 ms start, measured with
// GODEBUG=inittrace=1).
//
// Go initialises packages in the order of their import paths, each once
// all it imports is initialised, so this one runs as soon as
// internal/sandbox and the standard library it needs are ready: it
// imports nothing else, and internal/layering holds it to that. A test
// in cmd/grub checks, with inittrace, that the schemas and cobra are not
// initialised on the launcher's path.
package launch

import (
	"os"

	"github.com/grub-dev/grub/internal/sandbox"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecCommand {
		// Main returns only when it could not run the command; it has
		// said why on stderr.
		os.Exit(sandbox.Main(os.Args[2:]))
	}
}
