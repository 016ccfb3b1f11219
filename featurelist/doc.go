// Package featurelist owns the feature list (feature-list.json): its Go
// types, parsing with schema validation, and the referee's rules of DESIGN.md
// section 4 as pure functions: the initializer checks and the execution-turn
// diff check.
//
// It imports only the standard library and schemas.
package featurelist
