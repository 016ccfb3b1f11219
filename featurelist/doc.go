// Package featurelist owns the feature list (feature-list.json) as data:
// its Go types, parsing with schema validation, the stable encoding grub
// writes (Marshal), and the referee's rules as pure functions: the
// initializer checks and the execution-turn diff check. It does no file IO;
// the harness package reads and writes the file. It keeps no state of its
// own: the Encoder is a value its owner holds (harness.Store), and the
// check of a turn is handed the accepted list's bytes.
//
// It imports only the standard library and schemas.
package featurelist
