// Package prompts owns the text grub sends to the coding agent: the
// initializer prompt, the execution prompt and the budget wrap-up message,
// each in English ("en") and Chinese ("zh"). The templates are text/template
// files embedded from templates/<locale>/.
//
// The model is untrusted and starts every turn with a fresh context, so a
// prompt carries everything the turn needs: the rules, the counts, the one
// proposed feature, the last check and decision, and the notes the controller
// queued. Every string that comes from the user, the agent or a command is
// clipped to a fixed size where it could grow without bound and reaches the
// template byte-exact (a model copies commands from it), inside a fence
// (Fence, Code) longer than any backtick run in it, with only the sequences
// that could close one of the prompt's tags or open a <loop-state> block
// neutralised (NeutraliseTags), so it cannot end its block or forge a
// decision. Every loop-state example is written with
// placeholders that do not validate against schemas/loop-state.schema.json.
//
// It is a leaf: it imports only the standard library (text/template, never
// html/template, and embed).
package prompts
