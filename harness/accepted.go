package harness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/internal/failpoint"
	"github.com/grub-dev/grub/schemas"
)

// The accepted feature list (State.FeatureListBaseline) is as large as
// feature-list.json (700 KB at 2,000 features) while the rest of state
// is a few KB, and state.json is written twice a turn; a turn changes
// one feature of it. So the list lives outside state.json, in two files
// grub alone writes and never commits:
//
//   - accepted-list.json, a base: the list in featurelist.Marshal's bytes
//     (what grub writes to feature-list.json when it restores it);
//   - accepted-list.changes.jsonl, the changes since: one line per
//     changed feature, {"index": i, "feature": {…}}, appended and synced.
//
// state.json names them (State.AcceptedList): the SHA-256 of the base's
// bytes, how many bytes of the changes apply, and the SHA-256 of the
// list they make, in Marshal's bytes. A turn that flips a feature appends
// a line of a few hundred bytes instead of writing the whole list; when
// the changes grow past half the base (or a change is more than a
// feature's fields: a goal edit, a new plan), a new base is written.
//
// A crash must never leave state.json naming a list no file holds:
//
//   - a change is appended at the length state.json names, before
//     state.json names the longer length: killed in between, the line is
//     past that length and ignored (the next append truncates it);
//   - a new base goes to accepted-list.next.json (synced), then
//     state.json names it, then it is renamed over accepted-list.json:
//     killed before the rename, the base is found in the .next file.
//
// loadAccepted rebuilds the list and checks it against the digest, so a
// changed or planted file counts for nothing; failing that, it takes
// feature-list.json when it is that list (a clone, where only it is
// committed: at every commit it holds the accepted list).

// AcceptedList names the accepted feature list's files in state.json.
type AcceptedList struct {
	SHA256       string `json:"sha256"`                 // of featurelist.Marshal of the list
	BaseSHA256   string `json:"baseSHA256"`             // of accepted-list.json's bytes
	ChangesBytes int64  `json:"changesBytes,omitempty"` // the applying prefix of accepted-list.changes.jsonl
}

// acceptedChange is a line of accepted-list.changes.jsonl.
type acceptedChange struct {
	Index   int                 `json:"index"`
	Feature featurelist.Feature `json:"feature"`
}

// minChanges is the size the changes may always grow to before a new
// base is written; beyond it, up to half the base's size.
const minChanges = 64 << 10

// acceptedCache is what a Store remembers of the accepted lists it
// encoded, wrote and read, so that a turn pays for the feature it changed
// rather than for the list. Each Store has its own (a field, not a
// global): two Stores in one process (tests, work trees, two tasks) never
// share one, and a Store sees only what it did itself.
type acceptedCache struct {
	// enc encodes the accepted list once per change; its bytes are also
	// what the referee is handed with a turn's list (ListBytes).
	enc featurelist.Encoder

	mu sync.Mutex
	// data and digest are the last bytes hashed and their SHA-256 (the
	// encoder returns the same slice for an unchanged list).
	data   []byte
	digest string
	// tasks holds, by task id, the accepted list the Store last wrote or
	// read from the files, what state.json names for it, and the files'
	// stamps then: while the stamps hold, the files hold that list, and
	// the next change can be appended.
	tasks map[string]*diskList
}

type diskList struct {
	acc          AcceptedList
	list         featurelist.List // the Store's own copy
	base, change fileStamp
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ListBytes is l in the bytes grub writes for it (featurelist.Marshal's),
// from the Store's encoder: the accepted list's, which the Store encoded
// when it last saved state, come back without encoding anything. The
// bytes are shared: the caller must not change them.
func (s *Store) ListBytes(l *featurelist.List) ([]byte, error) {
	return s.accepted.enc.Marshal(l)
}

// acceptedBytes returns l in Marshal's bytes and their SHA-256. A list
// that breaks the schema is a *schemas.Error naming accepted-list.json.
func (s *Store) acceptedBytes(id string, l *featurelist.List) ([]byte, string, error) {
	data, err := s.accepted.enc.Marshal(l)
	if err != nil {
		var se *schemas.Error
		if errors.As(err, &se) {
			se.File = s.Rel(s.Path(id, FileAcceptedList))
		}
		return nil, "", err
	}
	c := &s.accepted
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.data) != len(data) || len(data) == 0 || &c.data[0] != &data[0] {
		c.data, c.digest = data, digestOf(data)
	}
	return data, c.digest, nil
}

func (s *Store) remembered(id string) *diskList {
	c := &s.accepted
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks[id]
}

// remember records d for task id with the files' stamps as they are now
// (nil d, or a file that cannot be stat-ed, forgets the task).
func (s *Store) remember(id string, d *diskList) {
	if d != nil {
		base, err1 := os.Lstat(s.Path(id, FileAcceptedList))
		change, err2 := os.Lstat(s.Path(id, FileAcceptedChanges))
		switch {
		case err1 != nil:
			d = nil
		case errors.Is(err2, os.ErrNotExist):
			d.base = stampOf(base)
		case err2 != nil:
			d = nil
		default:
			d.base, d.change = stampOf(base), stampOf(change)
		}
	}
	c := &s.accepted
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tasks == nil {
		c.tasks = make(map[string]*diskList)
	}
	if d == nil {
		delete(c.tasks, id)
		return
	}
	c.tasks[id] = d
}

// current reports whether the files still are as d remembers them.
func (s *Store) current(id string, d *diskList) bool {
	base, err := os.Lstat(s.Path(id, FileAcceptedList))
	if err != nil || !base.Mode().IsRegular() || stampOf(base) != d.base || d.base == (fileStamp{}) {
		return false
	}
	change, err := os.Lstat(s.Path(id, FileAcceptedChanges))
	if errors.Is(err, os.ErrNotExist) {
		return d.acc.ChangesBytes == 0
	}
	return err == nil && change.Mode().IsRegular() && stampOf(change) == d.change
}

// writeStateAccepted writes state.json (rendered by render once
// st.AcceptedList is set) with the accepted list l, whose Marshal bytes
// are data with digest: nothing more when the files hold l already, a
// change appended when l differs from what they hold in features' fields
// only, else a new base.
// prev is what state.json names now (nil: nothing).
func (s *Store) writeStateAccepted(st *State, prev *AcceptedList, l *featurelist.List, data []byte, digest string, render func() ([]byte, error)) ([]byte, error) {
	d := s.remembered(st.ID)
	fresh := d != nil && s.current(st.ID, d)
	if fresh && d.acc.SHA256 == digest {
		acc := d.acc
		st.AcceptedList = &acc
		return s.writeStateFile(st, render)
	}
	if fresh {
		if line, ok := changeLines(&d.list, l); ok && d.acc.ChangesBytes+int64(len(line)) <= max(minChanges, int64(len(data))/2) {
			return s.appendAccepted(st, d, l, line, digest, render)
		}
	}
	return s.newAcceptedBase(st, prev, l, data, digest, render)
}

// changeLines is the changes' lines that make to from from, when they
// differ in features' fields only.
func changeLines(from, to *featurelist.List) ([]byte, bool) {
	if from.Version != to.Version || from.Goal != to.Goal || len(from.Features) != len(to.Features) {
		return nil, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range to.Features {
		if featurelist.SameFeature(&from.Features[i], &to.Features[i]) {
			continue
		}
		if err := enc.Encode(acceptedChange{Index: i, Feature: to.Features[i]}); err != nil {
			return nil, false
		}
	}
	return b.Bytes(), true
}

func (s *Store) writeStateFile(st *State, render func() ([]byte, error)) ([]byte, error) {
	data, err := render()
	if err != nil {
		return nil, err
	}
	if err := s.writeOwnFile(st.ID, FileState, data, 0o644); err != nil {
		return nil, err
	}
	return data, nil
}

// appendAccepted appends line to the changes at the length state.json
// names, syncs it, then writes state.json naming the longer length.
func (s *Store) appendAccepted(st *State, d *diskList, l *featurelist.List, line []byte, digest string, render func() ([]byte, error)) ([]byte, error) {
	path := s.Path(st.ID, FileAcceptedChanges)
	if err := s.checkTaskDirs(st.ID); err != nil {
		return nil, err
	}
	_, missing := os.Lstat(path)
	f, err := s.openOwnFile(path, os.O_WRONLY|os.O_CREATE, 0o644, "")
	if err != nil { // not grub's file as it left it: start from a new base
		full, _, _ := s.acceptedBytes(st.ID, l)
		return s.newAcceptedBase(st, &d.acc, l, full, digest, render)
	}
	at := d.acc.ChangesBytes
	err = f.Truncate(at)
	if err == nil {
		_, err = f.WriteAt(line, at)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && missing != nil { // a new file: its name must last too
		err = atomicfile.SyncDir(s.Dir(st.ID))
	}
	if err != nil {
		s.remember(st.ID, nil)
		return nil, fmt.Errorf("write %s: %w", s.Rel(path), err)
	}
	failpoint.Hit(failpoint.AcceptedWritten)
	acc := AcceptedList{SHA256: digest, BaseSHA256: d.acc.BaseSHA256, ChangesBytes: at + int64(len(line))}
	st.AcceptedList = &acc
	out, err := s.writeStateFile(st, render)
	if err != nil {
		s.remember(st.ID, nil)
		return nil, err
	}
	failpoint.Hit(failpoint.StateNamesAccepted)
	next := &diskList{acc: acc, list: d.list}
	for i := range l.Features {
		if !featurelist.SameFeature(&next.list.Features[i], &l.Features[i]) {
			next.list.Features[i] = l.Features[i].Clone()
		}
	}
	s.remember(st.ID, next)
	return out, nil
}

// newAcceptedBase writes data as the new base in the three steps above
// and empties the changes. A base that state.json names (prev) still in
// accepted-list.next.json (a crash before its rename) is put in place
// first, so that writing the next one never takes it away.
func (s *Store) newAcceptedBase(st *State, prev *AcceptedList, l *featurelist.List, data []byte, digest string, render func() ([]byte, error)) ([]byte, error) {
	s.remember(st.ID, nil)
	if err := s.settleNext(st.ID, prev); err != nil {
		return nil, err
	}
	if err := s.writeOwnFile(st.ID, fileAcceptedNext, data, 0o644); err != nil {
		return nil, err
	}
	failpoint.Hit(failpoint.AcceptedWritten)
	acc := AcceptedList{SHA256: digest, BaseSHA256: digest}
	st.AcceptedList = &acc
	out, err := s.writeStateFile(st, render)
	if err != nil {
		return nil, err
	}
	failpoint.Hit(failpoint.StateNamesAccepted)
	if err := s.promoteBase(st.ID); err != nil {
		return nil, err
	}
	s.remember(st.ID, &diskList{acc: acc, list: l.Clone()})
	return out, nil
}

// settleNext renames accepted-list.next.json into place when it holds the
// base prev names and accepted-list.json does not: then state.json names
// a base that only the .next file holds.
func (s *Store) settleNext(id string, prev *AcceptedList) error {
	if prev == nil {
		return nil
	}
	if data, err := s.readRegular(s.Path(id, FileAcceptedList)); err == nil && digestOf(data) == prev.BaseSHA256 {
		return nil
	}
	data, err := s.readRegular(s.Path(id, fileAcceptedNext))
	if err != nil || digestOf(data) != prev.BaseSHA256 {
		return nil
	}
	path := s.Path(id, FileAcceptedList)
	if _, err := removeNonRegular(path, 0o644); err != nil {
		return fmt.Errorf("remove %s to write it: %w", s.Rel(path), err)
	}
	if err := os.Rename(s.Path(id, fileAcceptedNext), path); err != nil {
		return fmt.Errorf("write %s: %w", s.Rel(path), err)
	}
	return atomicfile.SyncDir(s.Dir(id))
}

// promoteBase renames accepted-list.next.json over accepted-list.json (a
// folder or link in its place is removed first; a link is replaced,
// never followed), syncs the folder and empties the changes.
func (s *Store) promoteBase(id string) error {
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
	return s.emptyChanges(id)
}

// emptyChanges empties accepted-list.changes.jsonl, never through a link
// (whatever is there that is not a regular file is removed).
func (s *Store) emptyChanges(id string) error {
	path := s.Path(id, FileAcceptedChanges)
	if _, err := removeNonRegular(path, 0o644); err != nil {
		return fmt.Errorf("remove %s: %w", s.Rel(path), err)
	}
	f, err := s.openOwnFile(path, os.O_WRONLY, 0o644, "")
	var nr *NotRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case errors.As(err, &nr): // a second name (a hard link): drop grub's
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", s.Rel(path), err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("empty %s: %w", s.Rel(path), err)
	}
	err = f.Truncate(0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("empty %s: %w", s.Rel(path), err)
	}
	return nil
}

// loadAccepted returns the accepted list acc names: from the base and
// the changes (the base found in accepted-list.json, or in
// accepted-list.next.json after a crash before its rename), else from
// feature-list.json when it is that list. None holding it is a
// *DamagedError.
func (s *Store) loadAccepted(id string, acc AcceptedList) (*featurelist.List, error) {
	if l, ok := s.acceptedFromFiles(id, acc); ok {
		return l, nil
	}
	if l, ok := s.acceptedFromList(id, acc.SHA256); ok {
		return l, nil
	}
	return nil, &DamagedError{ID: id, File: s.Rel(s.Path(id, FileAcceptedList)),
		Problem: "is missing or is not the accepted feature list state.json names, and feature-list.json is not that list either",
		Fix:     fmt.Sprintf("restore feature-list.json from the task's last commit (git checkout HEAD -- %s) and run grub again", s.Rel(s.Path(id, FileFeatureList)))}
}

// acceptedFromFiles rebuilds the list from the base and the changes and
// checks it against acc. The base's bytes, with their digest, are
// Marshal's, which grub checked before writing them: they are decoded
// without a second check, as are the changes, which the final digest
// checks.
func (s *Store) acceptedFromFiles(id string, acc AcceptedList) (*featurelist.List, bool) {
	var base []byte
	inPlace := false // the base is accepted-list.json (not the .next file)
	for _, name := range []string{FileAcceptedList, fileAcceptedNext} {
		if data, err := s.readRegular(s.Path(id, name)); err == nil && digestOf(data) == acc.BaseSHA256 {
			base, inPlace = data, name == FileAcceptedList
			break
		}
	}
	var l featurelist.List
	if base == nil || json.Unmarshal(base, &l) != nil {
		return nil, false
	}
	s.accepted.enc.Prime(&l, base)
	if acc.ChangesBytes > 0 && !s.applyChanges(id, &l, acc.ChangesBytes) {
		return nil, false
	}
	data, digest, err := s.acceptedBytes(id, &l)
	if err != nil || digest != acc.SHA256 || data == nil {
		return nil, false
	}
	if inPlace {
		s.remember(id, &diskList{acc: acc, list: l.Clone()})
	}
	return &l, true
}

// applyChanges applies the first n bytes of the changes to l.
func (s *Store) applyChanges(id string, l *featurelist.List, n int64) bool {
	path := s.Path(id, FileAcceptedChanges)
	f, err := s.openOwnFile(path, os.O_RDONLY, 0, "")
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, n))
	var read int64
	for {
		line, err := r.ReadBytes('\n')
		read += int64(len(line))
		if errors.Is(err, io.EOF) {
			return len(line) == 0 && read == n
		}
		if err != nil {
			return false
		}
		var c acceptedChange
		if json.Unmarshal(line, &c) != nil || c.Index < 0 || c.Index >= len(l.Features) {
			return false
		}
		l.Features[c.Index] = c.Feature
	}
}

// acceptedFromList returns feature-list.json's list when grub would write
// the bytes digest names for it.
func (s *Store) acceptedFromList(id, digest string) (*featurelist.List, bool) {
	path := s.Path(id, FileFeatureList)
	data, err := s.readRegular(path)
	if err != nil {
		return nil, false
	}
	l, err := featurelist.Parse(s.Rel(path), data)
	if err != nil {
		return nil, false
	}
	if digestOf(data) == digest {
		return l, true
	}
	enc, err := featurelist.Marshal(l)
	return l, err == nil && digestOf(enc) == digest
}

// AcceptedFilesHold reports whether task st's accepted-list files hold
// the list st names (true when st names none): grub doctor's check. A
// task whose list is found in feature-list.json instead works, and its
// next save writes the files again.
func (s *Store) AcceptedFilesHold(st *State) bool {
	if st.AcceptedList == nil {
		return true
	}
	_, ok := s.acceptedFromFiles(st.ID, *st.AcceptedList)
	return ok
}

// RewriteAccepted writes task st's accepted list as a new base and saves
// st: grub doctor --repair, when the files do not hold it.
func (s *Store) RewriteAccepted(st *State) error {
	s.remember(st.ID, nil)
	return s.SaveState(st)
}
