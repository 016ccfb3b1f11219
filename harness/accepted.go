package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/internal/failpoint"
	"github.com/grub-dev/grub/schemas"
)

// The accepted feature list (State.FeatureListBaseline) is as large as
// feature-list.json (730 KB at 2,000 features) while the rest of state
// is a few KB, and state.json is written twice a turn. So the list lives
// in its own file, accepted-list.json, in the bytes featurelist.Marshal
// gives (the bytes grub writes to feature-list.json when it restores it),
// and state.json names it by the SHA-256 of those bytes
// (acceptedListSHA256). It is written only when the accepted list
// changes, and never committed: at every commit feature-list.json holds
// the accepted list, so a clone finds it there (loadAccepted).
//
// A crash must never leave state.json naming a list no file holds, so a
// new list is written in three steps:
//
//  1. accepted-list.next.json gets the new bytes (atomically, synced);
//  2. state.json gets the new digest;
//  3. accepted-list.next.json is renamed over accepted-list.json.
//
// Killed before 2, state.json names the old list, still in
// accepted-list.json; killed between 2 and 3, it names the new one, in
// accepted-list.next.json. loadAccepted looks in both, then in
// feature-list.json, and takes the file whose bytes hash to the digest:
// the digest is also what makes a changed or planted file count for
// nothing.

// acceptedEncoder encodes the accepted list once per change.
var acceptedEncoder featurelist.Encoder

// lastDigest remembers the SHA-256 of the last bytes hashed (the
// encoder returns the same slice for an unchanged list).
var lastDigest struct {
	sync.Mutex
	data   []byte
	digest string
}

// acceptedBytes returns l as accepted-list.json holds it and the SHA-256
// of those bytes in hex. A list that breaks the schema is a
// *schemas.Error naming the file of task id.
func (s *Store) acceptedBytes(id string, l *featurelist.List) ([]byte, string, error) {
	data, err := acceptedEncoder.Marshal(l)
	if err != nil {
		var se *schemas.Error
		if errors.As(err, &se) {
			se.File = s.Rel(s.Path(id, FileAcceptedList))
		}
		return nil, "", err
	}
	lastDigest.Lock()
	defer lastDigest.Unlock()
	if len(lastDigest.data) != len(data) || len(data) == 0 || &lastDigest.data[0] != &data[0] {
		lastDigest.data, lastDigest.digest = data, digestOf(data)
	}
	return data, lastDigest.digest, nil
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// written remembers, by path, the accepted-list.json this process wrote
// or read and found to hold a digest, with its identity then: a file
// whose identity has not changed since holds the same bytes (a write
// changes its change time, a replacement its inode).
var written struct {
	sync.Mutex
	files map[string]fileMark
}

type fileMark struct {
	digest string
	stamp  fileStamp
}

// acceptedCurrent reports whether task id's accepted-list.json holds the
// list whose digest is digest.
func (s *Store) acceptedCurrent(id, digest string) bool {
	path := s.Path(id, FileAcceptedList)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	written.Lock()
	m, ok := written.files[path]
	written.Unlock()
	if ok && m.digest == digest && m.stamp == stampOf(fi) && m.stamp != (fileStamp{}) {
		return true
	}
	data, err := s.readRegular(path)
	if err != nil || digestOf(data) != digest {
		return false
	}
	s.markAccepted(path, digest)
	return true
}

// markAccepted remembers that path holds digest, as it is now.
func (s *Store) markAccepted(path, digest string) {
	fi, err := os.Lstat(path)
	written.Lock()
	defer written.Unlock()
	if err != nil {
		delete(written.files, path)
		return
	}
	if written.files == nil {
		written.files = make(map[string]fileMark)
	}
	written.files[path] = fileMark{digest: digest, stamp: stampOf(fi)}
}

// writeStateWithAccepted writes state.json (data, naming digest) and
// accepted (the list's bytes) in the three steps above.
func (s *Store) writeStateWithAccepted(id string, data, accepted []byte, digest string) error {
	if err := s.writeOwnFile(id, fileAcceptedNext, accepted, 0o644); err != nil {
		return err
	}
	failpoint.Hit(failpoint.AcceptedStaged)
	if err := s.writeOwnFile(id, FileState, data, 0o644); err != nil {
		return err
	}
	failpoint.Hit(failpoint.StateNamesAccepted)
	return s.promoteAccepted(id, digest)
}

// promoteAccepted renames accepted-list.next.json over accepted-list.json
// (a folder or link in its place is removed first; a link is replaced,
// never followed) and syncs the folder.
func (s *Store) promoteAccepted(id, digest string) error {
	path := s.Path(id, FileAcceptedList)
	if _, err := removeNonRegular(path, 0o644); err != nil {
		return fmt.Errorf("remove %s to write it: %w", s.Rel(path), err)
	}
	if err := os.Rename(s.Path(id, fileAcceptedNext), path); err != nil {
		return fmt.Errorf("write %s: %w", s.Rel(path), err)
	}
	if err := atomicfile.SyncDir(s.Dir(id)); err != nil {
		return err
	}
	s.markAccepted(path, digest)
	return nil
}

// loadAccepted returns the accepted list state.json names by digest: from
// accepted-list.json, from accepted-list.next.json (a crash between
// steps 2 and 3), or from feature-list.json (a clone, where only it is
// committed, or a lost accepted-list.json), whichever holds it. The first
// two hold Marshal's bytes, which grub checked before writing them: bytes
// with the digest are decoded without a second check. None holding it is
// a *DamagedError.
func (s *Store) loadAccepted(id, digest string) (*featurelist.List, error) {
	for _, name := range []string{FileAcceptedList, fileAcceptedNext} {
		data, err := s.readRegular(s.Path(id, name))
		if err != nil || digestOf(data) != digest {
			continue
		}
		var l featurelist.List
		if err := json.Unmarshal(data, &l); err != nil {
			return nil, fmt.Errorf("decode %s: %w", s.Rel(s.Path(id, name)), err)
		}
		if name == FileAcceptedList {
			s.markAccepted(s.Path(id, name), digest)
		}
		acceptedEncoder.Prime(&l, data)
		return &l, nil
	}
	if l, ok := s.acceptedFromList(id, digest); ok {
		return l, nil
	}
	return nil, &DamagedError{ID: id, File: s.Rel(s.Path(id, FileAcceptedList)),
		Problem: "is missing or is not the accepted feature list state.json names, and feature-list.json is not that list either",
		Fix:     fmt.Sprintf("restore feature-list.json from the task's last commit (git checkout HEAD -- %s) and run grub again", s.Rel(s.Path(id, FileFeatureList)))}
}

// acceptedFromList returns feature-list.json's list when grub would write
// the bytes digest names for it.
func (s *Store) acceptedFromList(id, digest string) (*featurelist.List, bool) {
	path := s.Path(id, FileFeatureList)
	data, err := s.readRegular(path)
	if err != nil {
		return nil, false
	}
	if digestOf(data) != digest {
		l, err := featurelist.Parse(s.Rel(path), data)
		if err != nil {
			return nil, false
		}
		enc, err := featurelist.Marshal(l)
		if err != nil || digestOf(enc) != digest {
			return nil, false
		}
		return l, true
	}
	l, err := featurelist.Parse(s.Rel(path), data)
	return l, err == nil
}

// AcceptedFileHolds reports whether task id's accepted-list.json holds
// the list st names (true when st names none): grub doctor's check. A
// task whose list is found elsewhere (loadAccepted) works, and its next
// run writes the file again.
func (s *Store) AcceptedFileHolds(st *State) bool {
	if st.AcceptedListSHA256 == "" {
		return true
	}
	data, err := s.readRegular(s.Path(st.ID, FileAcceptedList))
	return err == nil && digestOf(data) == st.AcceptedListSHA256
}

// WriteAccepted writes task st's accepted list to accepted-list.json
// from st.FeatureListBaseline: grub doctor --repair.
func (s *Store) WriteAccepted(st *State) error {
	if st.FeatureListBaseline == nil {
		return nil
	}
	data, digest, err := s.acceptedBytes(st.ID, st.FeatureListBaseline)
	if err != nil {
		return err
	}
	if digest != st.AcceptedListSHA256 {
		return fmt.Errorf("the accepted list does not hash to the digest in %s", s.Rel(s.Path(st.ID, FileState)))
	}
	if err := s.writeOwnFile(st.ID, FileAcceptedList, data, 0o644); err != nil {
		return err
	}
	s.markAccepted(s.Path(st.ID, FileAcceptedList), digest)
	return nil
}
