package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// The record is grub's: the progress log's entries, the turn ledger and
// the checklist are what grub wrote, byte for byte. After every write of
// its own grub keeps, in the task's private folder (outside the
// workspace, read-only in the sandbox), the length and SHA-256 of what it
// wrote: the log's prefix up to the end of its last append (the agent's
// notes before that included), the whole ledger, the whole checklist; and
// a copy of the log and the ledger to restore them from. CheckRecord
// compares the files with it after a turn and puts back what a turn
// rewrote, truncated, deleted or replaced.

const (
	fileRecordKeep      = "record.json"
	fileRecordLogCopy   = "record.progress-log.md"
	fileRecordTurnsCopy = "record.turns.jsonl"
	fileRecordInit      = "record.init.sh"
)

// keptFile is what grub wrote of one record file: its first Size bytes,
// their SHA-256, and (for the files grub appends to) the hash's state
// after them, so that an append hashes only the new bytes.
type keptFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	State  []byte `json:"state,omitempty"`
}

// keptRecord is record.json in the task's private folder.
type keptRecord struct {
	Version int                  `json:"version"`
	Files   map[string]*keptFile `json:"files"`
}

// RecordChange is a change a turn made to a record file, which grub put
// back (CheckRecord).
type RecordChange struct {
	Name string // the file's name in the task folder (FileProgressLog, …)
	File string // its path relative to the workspace
	What string // what was done to it
}

func (c RecordChange) String() string { return c.File + " " + c.What }

// recordStamps remembers, per record file's path, the stamp at which the
// file was last seen holding what grub kept (as its prefix, for the log),
// so that a check or an append of an untouched file reads nothing.
type recordStamps struct {
	mu sync.Mutex
	m  map[string]fileStamp
}

// allStamps serves every Store of the process: a Store is a plain value
// (Open, At) and the stamps are a cache keyed by absolute path, valid
// whoever asks.
var allStamps recordStamps

func (r *recordStamps) get(path string) (fileStamp, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.m[path]
	return s, ok && s != (fileStamp{})
}

func (r *recordStamps) set(path string, s fileStamp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]fileStamp{}
	}
	r.m[path] = s
}

// appendOnly reports whether grub appends to the record file name (its
// kept part is a prefix and a copy is kept), rather than writing it whole.
func appendOnly(name string) bool { return name == FileProgressLog || name == FileTurnLedger }

func copyName(name string) string {
	if name == FileProgressLog {
		return fileRecordLogCopy
	}
	return fileRecordTurnsCopy
}

// loadKeep reads the kept record of task id; a missing one is empty.
// With no private folder there is nothing to keep and dir is "": the
// folder is never made here, since having one is what registers a task
// (Registered), and a task only this user's runner or Create registers
// (a planted or cloned one that grub doctor, edit or steer writes to
// stays unregistered).
func (s *Store) loadKeep(id string) (dir string, k *keptRecord, err error) {
	if !s.Registered(id) {
		return "", nil, nil
	}
	if dir, err = s.privatePath(id); err != nil {
		return "", nil, err
	}
	k = &keptRecord{Version: 1, Files: map[string]*keptFile{}}
	data, err := os.ReadFile(filepath.Join(dir, fileRecordKeep))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dir, k, nil
	case err != nil:
		return "", nil, fmt.Errorf("read grub's record of the task: %w", err)
	}
	if err := json.Unmarshal(data, k); err != nil || k.Files == nil {
		// The private folder is grub's alone; a damaged keep is taken
		// again from the files, as for a task grub has not kept yet.
		k = &keptRecord{Version: 1, Files: map[string]*keptFile{}}
	}
	return dir, k, nil
}

// saveKeep writes record.json, without fsyncs: after a crash of the
// machine an older one only means that the next append reads a little
// more (the copies, synced, hold at least what it says, and are cut to
// its length before they grow), and a lost one is taken again from the
// files when the next turn starts.
func saveKeep(dir string, k *keptRecord) error {
	data, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return atomicfile.WriteFileUnsynced(filepath.Join(dir, fileRecordKeep), data, 0o600)
}

// openRecord opens a record file without following a link; fi is its
// stat. A missing file is (nil, nil, nil); anything but a regular file a
// *NotRegularError.
func (s *Store) openRecord(path string) (*os.File, os.FileInfo, error) {
	before, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, nil, &NotRegularError{File: s.Rel(path), Kind: kindOf(before.Mode())}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(before, fi) {
		f.Close()
		return nil, nil, &NotRegularError{File: s.Rel(path), Kind: "a file that was replaced while grub read it"}
	}
	return f, fi, nil
}

// prefixHolds reports whether f (of stat fi) begins with what kf keeps;
// exact asks for nothing after it either.
func prefixHolds(f *os.File, fi os.FileInfo, kf *keptFile, exact bool) (bool, error) {
	if fi.Size() < kf.Size || (exact && fi.Size() != kf.Size) {
		return false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, kf.Size)); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == kf.SHA256, nil
}

// KeepRecord keeps task id's record files as they are when a turn
// starts, where what grub kept no longer holds or nothing is kept yet (a
// task made before grub kept them, a new private folder, a change made
// between runs, which is the user's): a difference after the turn is
// then the turn's. Files that hold what was kept cost a stat.
func (s *Store) KeepRecord(id string) error {
	dir, k, err := s.loadKeep(id)
	if err != nil || dir == "" {
		return err
	}
	if err := s.keepInitScript(id, dir); err != nil {
		return err
	}
	changed := false
	for _, name := range recordFiles {
		if kf := k.Files[name]; kf != nil {
			what, err := s.recordChanged(id, dir, name, kf)
			if err != nil {
				return err
			}
			if what == "" {
				continue
			}
		}
		if err := s.keepWhole(id, dir, k, name); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return saveKeep(dir, k)
}

// keepInitScript keeps a copy of init.sh as the turn starts, for the run
// that recovers the turn if grub dies in it (KeptInitScript): the agent
// may edit init.sh, not delete or empty it. An init.sh unchanged since
// the last turn (its stamp) costs a stat.
func (s *Store) keepInitScript(id, dir string) error {
	path := s.Path(id, FileInitScript)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // nothing to keep: the referee's checks say it
	}
	if seen, ok := allStamps.get(path); ok && seen == stampOf(fi) {
		return nil
	}
	data, err := s.readRegular(path)
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, fileRecordInit), data, 0o600); err != nil {
		return err
	}
	allStamps.set(path, stampOf(fi))
	return nil
}

// KeptInitScript is init.sh as the last turn of task id started
// (KeepRecord), nil when none is kept.
func (s *Store) KeptInitScript(id string) []byte {
	dir, err := s.privatePath(id)
	if err != nil || !s.Registered(id) {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, fileRecordInit))
	if err != nil {
		return nil
	}
	return data
}

// recordFiles are the files CheckRecord defends.
var recordFiles = []string{FileProgressLog, FileTurnLedger, FileChecklist}

// keepWhole keeps the file name as it is now, whole (with a copy for the
// files grub appends to).
func (s *Store) keepWhole(id, dir string, k *keptRecord, name string) error {
	path := s.Path(id, name)
	f, fi, err := s.openRecord(path)
	var nr *NotRegularError
	if errors.As(err, &nr) {
		delete(k.Files, name) // nothing of grub's to keep there
		return nil
	}
	if err != nil {
		return err
	}
	var data []byte
	if f != nil {
		data, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	h := sha256.New()
	h.Write(data)
	kf := &keptFile{Size: int64(len(data)), SHA256: hex.EncodeToString(h.Sum(nil))}
	if appendOnly(name) {
		if kf.State, err = h.(encoding.BinaryMarshaler).MarshalBinary(); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, copyName(name)), data, 0o600); err != nil {
			return err
		}
	}
	k.Files[name] = kf
	if fi != nil {
		allStamps.set(path, stampOf(fi))
	}
	return nil
}

// keepWritten keeps the record file name of task id after grub wrote it:
// appended to it (the log, the ledger: pre is the file's stamp before the
// append, the zero stamp when unknown) or wrote it whole (the checklist).
// When what was kept is still the file's prefix, only the new bytes are
// read, hashed and added to the copy; otherwise (a change grub did not
// see, an older task) the file is kept whole as it is.
func (s *Store) keepWritten(id, name string, pre fileStamp) error {
	dir, k, err := s.loadKeep(id)
	if err != nil || dir == "" {
		return err
	}
	kf := k.Files[name]
	if kf == nil || !appendOnly(name) {
		if err := s.keepWhole(id, dir, k, name); err != nil {
			return err
		}
		return saveKeep(dir, k)
	}
	path := s.Path(id, name)
	f, fi, err := s.openRecord(path)
	if err != nil || f == nil {
		return err
	}
	defer f.Close()
	ok, err := s.keptPrefix(path, f, fi, kf, pre)
	if err != nil {
		return err
	}
	if !ok {
		if err := s.keepWhole(id, dir, k, name); err != nil {
			return err
		}
		return saveKeep(dir, k)
	}
	if err := extendKept(dir, name, f, fi, kf); err != nil {
		return err
	}
	allStamps.set(path, stampOf(fi))
	return saveKeep(dir, k)
}

// keptPrefix reports whether f still begins with what kf keeps: known
// when pre (the stamp before grub's append) is one at which it was seen
// to, else read and hashed.
func (s *Store) keptPrefix(path string, f *os.File, fi os.FileInfo, kf *keptFile, pre fileStamp) (bool, error) {
	if seen, ok := allStamps.get(path); ok && seen == pre && fi.Size() >= kf.Size {
		return true, nil
	}
	return prefixHolds(f, fi, kf, false)
}

// extendKept adds the bytes of f after kf's prefix to the kept copy and
// the kept hash.
func extendKept(dir, name string, f *os.File, fi os.FileInfo, kf *keptFile) error {
	added := make([]byte, fi.Size()-kf.Size)
	if _, err := f.ReadAt(added, kf.Size); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(kf.State); err != nil {
		return fmt.Errorf("grub's record of %s: %w", name, err)
	}
	cp, err := os.OpenFile(filepath.Join(dir, copyName(name)), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := writeCopyAt(cp, added, kf.Size); err != nil {
		return err
	}
	h.Write(added)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return err
	}
	kf.Size, kf.SHA256, kf.State = fi.Size(), hex.EncodeToString(h.Sum(nil)), state
	return nil
}

// writeCopyAt cuts the kept copy cp to off bytes, writes data there,
// syncs and closes it.
func writeCopyAt(cp *os.File, data []byte, off int64) error {
	defer cp.Close()
	if err := cp.Truncate(off); err != nil {
		return err
	}
	if _, err := cp.WriteAt(data, off); err != nil {
		return err
	}
	return cp.Sync()
}

// stampNow is the stamp of path now; the zero stamp when it is not a
// regular file.
func stampNow(path string) fileStamp {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStamp{}
	}
	return stampOf(fi)
}

// CheckRecord compares task st's record files with what grub kept of
// them, and puts back each that a turn changed: a progress log whose
// entries (the bytes up to the end of grub's last append) were rewritten
// or truncated gets that prefix back, followed by the notes the agent
// appended after grub's last entry when that entry is still there
// unchanged (laterNotes); a ledger changed in any way gets grub's
// copy back; a checklist is rendered again from the accepted list. A
// deleted file, or one replaced by a link or a folder, counts as changed.
// An untouched file costs a stat. It returns what it put back.
func (s *Store) CheckRecord(st *State) ([]RecordChange, error) {
	return s.compareRecord(st, true)
}

// RecordDiffers is CheckRecord without putting anything back: what
// differs from what grub kept of task id's record (grub doctor).
func (s *Store) RecordDiffers(id string) ([]RecordChange, error) {
	return s.compareRecord(&State{ID: id}, false)
}

func (s *Store) compareRecord(st *State, restore bool) ([]RecordChange, error) {
	dir, k, err := s.loadKeep(st.ID)
	if err != nil || dir == "" {
		return nil, err
	}
	var changes []RecordChange
	for _, name := range recordFiles {
		kf := k.Files[name]
		if kf == nil {
			continue
		}
		what, err := s.recordChanged(st.ID, dir, name, kf)
		if err != nil {
			return changes, err
		}
		if what == "" {
			continue
		}
		if restore {
			if err := s.restoreRecord(st, dir, name, kf); err != nil {
				return changes, err
			}
		}
		changes = append(changes, RecordChange{Name: name, File: s.Rel(s.Path(st.ID, name)), What: what})
	}
	return changes, nil
}

// recordChanged says how the record file name differs from kf, or "".
func (s *Store) recordChanged(id, dir, name string, kf *keptFile) (string, error) {
	path := s.Path(id, name)
	f, fi, err := s.openRecord(path)
	var nr *NotRegularError
	switch {
	case errors.As(err, &nr):
		return "was replaced by " + nr.Kind, nil
	case err != nil:
		return "", err
	case f == nil && kf.Size == 0:
		return "", nil
	case f == nil:
		return "was deleted", nil
	}
	defer f.Close()
	if seen, ok := allStamps.get(path); ok && seen == stampOf(fi) {
		return "", nil
	}
	exact := !appendOnly(name) || name == FileTurnLedger
	ok, err := prefixHolds(f, fi, kf, exact)
	switch {
	case err != nil:
		return "", err
	case ok:
		allStamps.set(path, stampOf(fi))
		return "", nil
	case fi.Size() < kf.Size && appendOnly(name) && truncated(f, fi, filepath.Join(dir, copyName(name))):
		return fmt.Sprintf("was truncated (%d of the %d bytes grub wrote are left)", fi.Size(), kf.Size), nil
	case exact && fi.Size() > kf.Size:
		if ok, err := prefixHolds(f, fi, kf, false); err == nil && ok {
			return fmt.Sprintf("had %d bytes added that grub did not write", fi.Size()-kf.Size), nil
		}
	}
	return "was rewritten: its first bytes differ from what grub wrote", nil
}

// truncated reports whether f (of stat fi) holds the first bytes of the
// kept copy at cp: cut short, not rewritten.
func truncated(f *os.File, fi os.FileInfo, cp string) bool {
	kept, err := os.ReadFile(cp)
	if err != nil || int64(len(kept)) < fi.Size() {
		return false
	}
	now := make([]byte, fi.Size())
	if _, err := f.ReadAt(now, 0); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	return bytes.Equal(now, kept[:fi.Size()])
}

// restoreRecord puts back what grub wrote of the record file name.
func (s *Store) restoreRecord(st *State, dir, name string, kf *keptFile) error {
	if name == FileChecklist {
		return s.WriteChecklist(st.ID, st.Goal, st.FeatureListBaseline)
	}
	if kf.Size == 0 {
		// grub had written nothing there yet (a ledger before the
		// first record): what the turn made is removed.
		if err := os.RemoveAll(s.Path(st.ID, name)); err != nil {
			return fmt.Errorf("remove %s: %w", s.Rel(s.Path(st.ID, name)), err)
		}
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, copyName(name)))
	if err != nil {
		return fmt.Errorf("restore %s: grub's copy: %w", name, err)
	}
	if int64(len(data)) < kf.Size {
		return fmt.Errorf("restore %s: grub's copy is shorter than what grub wrote", name)
	}
	data = data[:kf.Size]
	if sum := sha256.Sum256(data); !bytes.Equal([]byte(hex.EncodeToString(sum[:])), []byte(kf.SHA256)) {
		return fmt.Errorf("restore %s: grub's copy does not hold what grub wrote", name)
	}
	if name == FileProgressLog {
		data = append(data, s.laterNotes(s.Path(st.ID, name), data)...)
	}
	if err := s.writeOwnFile(st.ID, name, data, 0o644); err != nil {
		return err
	}
	allStamps.set(s.Path(st.ID, name), stampNow(s.Path(st.ID, name)))
	return nil
}

// laterNotes is what the progress log at path (a regular file) holds
// after grub's last entry, the notes an agent may append there, when the
// log's earlier bytes were rewritten: kept holds what grub wrote, and its
// last entry (from its last "## " heading) is found in the log as it is
// now, the last time it occurs; what follows it is the agent's. Nothing
// when that entry is not there unchanged (the log was truncated, or its
// last entry rewritten too: then nothing tells the notes apart).
func (s *Store) laterNotes(path string, kept []byte) []byte {
	last := kept
	if i := bytes.LastIndex(kept, []byte("\n## ")); i >= 0 {
		last = kept[i+1:]
	}
	f, _, err := s.openRecord(path)
	if err != nil || f == nil || len(last) == 0 {
		return nil
	}
	defer f.Close()
	now, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	i := bytes.LastIndex(now, last)
	if i < 0 {
		return nil
	}
	return now[i+len(last):]
}
