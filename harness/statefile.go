package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/grub-dev/grub/schemas"
)

// This file holds state.json's encoding, writing and reading; the
// accepted feature list is kept in files of its own (accepted.go).

// encodeState encodes st, without its accepted list, as indented JSON
// and validates it. Sandbox paths inside the workspace are made relative
// to it first (relativePaths): a committed state.json holds nothing that
// only makes sense on one machine.
func (s *Store) encodeState(st *State) ([]byte, error) {
	st.Sandbox.Allow = s.relativePaths(st.Sandbox.Allow)
	st.Sandbox.Hide, st.Sandbox.Show = s.relativePaths(st.Sandbox.Hide), s.relativePaths(st.Sandbox.Show)
	rel := s.Rel(s.Path(st.ID, FileState))
	if !ValidID(st.ID) {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Violations: []schemas.Violation{
			{Pointer: "/id", Rule: fmt.Sprintf("%q is not a task id (8 lowercase hex characters)", st.ID)}}}
	}
	rest := *st
	rest.FeatureListBaseline = nil
	data, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	data = append(data, '\n')
	if err := schemas.Validate(schemas.State, rel, data); err != nil {
		return nil, err
	}
	return data, nil
}

// SaveState validates st and writes it to state.json atomically. An invalid
// state is never written. SaveState writes st as given: the caller sets
// UpdatedAt.
func (s *Store) SaveState(st *State) error {
	_, err := s.WriteState(st)
	return err
}

// WriteState is SaveState that returns the bytes written. An accepted
// list that changed is written first, as accepted.go describes; st's
// AcceptedList is set to name it. Nothing is written for a state that
// does not pass the schema.
func (s *Store) WriteState(st *State) ([]byte, error) {
	render := func() ([]byte, error) { return s.encodeState(st) }
	l := st.FeatureListBaseline
	if l == nil {
		st.AcceptedList = nil
		return s.writeStateFile(st, render)
	}
	data, digest, err := s.acceptedBytes(st.ID, l)
	if err != nil {
		return nil, err
	}
	// Check the state before writing anything: the files' names it will
	// hold do not change whether it passes.
	prev := st.AcceptedList
	st.AcceptedList = &AcceptedList{SHA256: digest, BaseSHA256: digest}
	if _, err := render(); err != nil {
		st.AcceptedList = prev
		return nil, err
	}
	return s.writeStateAccepted(st, prev, l, data, digest, render)
}

// StateBytes returns the raw content of a task's state.json. It must be a
// regular file: anything else there is a *NotRegularError. A task folder
// whose state.json is gone while its other files are there is a
// *DamagedError (grub doctor --repair rebuilds it); no folder at all is a
// *NotFoundError.
func (s *Store) StateBytes(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	path := s.Path(id, FileState)
	data, err := s.readRegular(path)
	var nr *NotRegularError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &nr):
		return nil, err
	case errors.Is(err, fs.ErrNotExist):
		if s.hasTaskFiles(id) {
			return nil, &DamagedError{ID: id, File: s.Rel(path), Problem: "is missing, though the task's other files are there",
				Fix: "rebuild it with grub doctor --repair " + id}
		}
		return nil, s.notFound(id)
	}
	return nil, fmt.Errorf("read %s: %w", s.Rel(path), err)
}

// LoadState reads, validates and decodes a task's state.json. A file that is
// not valid is a *schemas.Error naming the file, the JSON pointer and the
// rule; a missing task is a *NotFoundError.
func (s *Store) LoadState(id string) (*State, error) {
	data, err := s.StateBytes(id)
	if err != nil {
		return nil, err
	}
	return s.decodeState(id, data)
}

func (s *Store) decodeState(id string, data []byte) (*State, error) {
	rel := s.Rel(s.Path(id, FileState))
	// Decoded as strictly as it is validated: a key the schema does not
	// check (one in another case, one it does not know) is refused, not
	// read into State by encoding/json's case-insensitive matching.
	var st State
	// A file written before the regression sweep has no
	// limits.regressionChecks: its task gets the default sweep.
	st.Limits.RegressionChecks = DefaultRegressionChecks
	if err := schemas.DecodeInto(schemas.State, rel, data, &st); err != nil {
		return nil, err
	}
	if st.ID != id {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Violations: []schemas.Violation{
			{Pointer: "/id", Rule: fmt.Sprintf("is %q but the task folder is %q; restore the file from git", st.ID, id)}}}
	}
	if st.FeatureListBaseline == nil && st.AcceptedList != nil {
		list, err := s.loadAccepted(id, *st.AcceptedList)
		if err != nil {
			return nil, err
		}
		st.FeatureListBaseline = list
	}
	return &st, nil
}
