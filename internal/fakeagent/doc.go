// Package fakeagent is a FAKE coding agent for grub's end-to-end tests: a
// small program the `command` backend runs (`--agent-cmd 'fakeagent …'`)
// that plays an honest or a cheating agent from a script, so that every
// rule of the referee can be exercised without a model.
//
// It is test infrastructure, named as such: the testscript suite registers
// Main as the `fakeagent` program. It imports featurelist and the standard
// library.
package fakeagent
