// Package schemas owns grub's JSON Schemas (one *.schema.json file per JSON
// document grub reads or writes) and the validator that checks documents
// against them. The schemas are embedded and compiled once per process.
//
// It is a leaf: it imports only the standard library and
// santhosh-tekuri/jsonschema.
package schemas
