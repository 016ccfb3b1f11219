// Package termsafe makes text from outside grub safe to print on a
// terminal or in a one-line field.
//
// Text written by the agent or the user (a task title, a question, a
// steer message, a commit subject) is data. Printed raw, an escape
// sequence in it could move the cursor, rewrite the window title, clear
// the screen or, on some terminals, answer back into the input. [Escape]
// turns every control character into a visible escape such as \x1b or
// \u009b, keeping newlines and tabs; [Line] does the same and also escapes
// newline, tab and carriage return, for places that must stay on one line
// (commit subjects, table cells, log lines).
//
// The escaping is for display only: it is not reversible (a backslash in
// the input is left as it is) and must not be applied to text a program
// or a model reads back.
//
// termsafe is a leaf: it imports only the standard library.
package termsafe
