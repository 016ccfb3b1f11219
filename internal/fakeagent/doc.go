// Package fakeagent is a FAKE coding agent for grub's end-to-end tests: a
// small program the `command` backend runs (`--agent-cmd 'fakeagent …'`)
// that plays an honest or a cheating agent from a script, so that every
// rule of the referee can be exercised without a model.
//
// It is test and demo infrastructure, named as such: the testscript suite
// registers Main as the `fakeagent` program, and `grub demo` runs it (through
// grub's hidden demo-agent command) to show the referee at work without a
// model. Agent plays the same scripts in-process, as an agent.Agent, for
// unit tests that need no program and no real clock. It imports agent,
// featurelist and the standard library.
package fakeagent
