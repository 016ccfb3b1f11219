package cli

import (
	"bytes"
	"reflect"

	"github.com/grub-dev/grub/harness"
)

// ownTurnCommit is the test gitCommitter.Committed applies to the
// state.json a turn commit holds: grub's commit of the turn holds the
// state.json grub wrote for the turn's record just before committing it
// (the same bytes, while nothing wrote state since), or, once state was
// written again after the commit (a failing on-turn hook's pause, an idle
// grub edit or pause, a stop request taken at the end of the run), a
// state whose pending record is the one state still holds: the rendered
// entry, with its time and usage, that no turn can know beforehand. A
// commit with grub's trailers and any other state.json is not grub's.
func ownTurnCommit(store *harness.Store, id string, now []byte) func(committed []byte) bool {
	var pending *harness.PendingRecord
	if st, err := store.DecodeState(id, now); err == nil {
		pending = st.RecordPending
	}
	return func(committed []byte) bool {
		if bytes.Equal(committed, now) {
			return true
		}
		if pending == nil {
			return false
		}
		st, err := store.DecodeState(id, committed)
		return err == nil && st.RecordPending != nil && reflect.DeepEqual(st.RecordPending, pending)
	}
}
