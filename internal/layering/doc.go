// Package layering holds no code: its tests check the structural rules of
// docs/ARCHITECTURE.md in code rather than only in prose: every package's
// imports against the layering rules, and no function longer than 100
// lines. It imports nothing; its tests only the standard library (go/build,
// go/parser).
package layering
