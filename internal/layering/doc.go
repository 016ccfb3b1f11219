// Package layering holds no code: its test checks every package's imports
// against the layering rules in docs/ARCHITECTURE.md, so that the rules
// hold in code and not only in prose. It imports nothing; its test only
// the standard library (go/build).
package layering
