// Package report builds the report of one task (grub report): a data
// model made from the task's state, its feature list, its turn ledger
// (turns.jsonl) and its turn commits, and three renderers of it: one
// self-contained HTML page (inline CSS and SVG, no scripts, no network),
// compact Markdown for a pull request or $GITHUB_STEP_SUMMARY, and the
// model itself as JSON (schemas/report-output.schema.json, written by
// internal/cli).
//
// It reads no files and no git: internal/cli hands it the state, the list,
// the ledger and the commits (as Commit, so that this package never
// imports internal/gitx). Text from the agent is data: the HTML goes
// through html/template's escaping and Markdown through mdText, both
// after internal/termsafe has made control characters visible.
//
// It may import harness, featurelist, loopstate, templates and
// internal/termsafe.
package report
