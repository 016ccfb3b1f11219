// Package loopstate parses the <loop-state> decision block that ends every
// agent turn: only the last block counts, a ```json fence inside it is
// allowed, and the JSON must pass schemas/loop-state.schema.json. Its
// Status type names every decision status, the agent's and the
// controller's, so that harness, templates and the controller share one.
//
// It imports only the standard library and schemas.
package loopstate
