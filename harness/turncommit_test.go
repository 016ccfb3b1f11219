package harness

import "testing"

// TestStartMark: the noted turn commit is the mark a run starts from only
// when it is the commit of the record state holds as pending, on the
// same branch; otherwise state's own mark (none: nil).
func TestStartMark(t *testing.T) {
	const older, newer = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	main := HistoryMark{Branch: "refs/heads/main", Commit: older}
	cases := []struct {
		name  string
		note  *TurnCommitNote
		state func(st *State)
		want  string // the mark's commit; "" for nil
	}{
		{"the pending record's commit", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/main", Commit: newer}}, nil, newer},
		{"no note", nil, nil, older},
		{"a note of an earlier turn", &TurnCommitNote{Iteration: 3, Mark: HistoryMark{Branch: "refs/heads/main", Commit: newer}}, nil, older},
		{"a note of another branch", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/other", Commit: newer}}, nil, older},
		{"a note without a commit", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/main"}}, nil, older},
		{"no pending record", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/main", Commit: newer}},
			func(st *State) { st.RecordPending = nil }, older},
		{"a turn left awaiting", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/main", Commit: newer}},
			func(st *State) { st.AwaitingTurn = true }, older},
		{"state rewound with the commits (iteration 3, note of 4)", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/main", Commit: newer}},
			func(st *State) { st.CurrentIteration, st.RecordPending.Iteration = 3, 3 }, older},
		{"no mark in state", &TurnCommitNote{Iteration: 4, Mark: HistoryMark{Branch: "refs/heads/main", Commit: newer}},
			func(st *State) { st.History = nil }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, st := newTaskFolder(t)
			m := main
			st.History, st.CurrentIteration, st.AwaitingTurn, st.TurnStartedAt = &m, 4, false, nil
			st.RecordPending = &PendingRecord{Iteration: 4, Entry: "## Turn 4\n"}
			if c.state != nil {
				c.state(st)
			}
			if c.note != nil {
				if err := s.SaveTurnCommit(st.ID, *c.note); err != nil {
					t.Fatal(err)
				}
			}
			got := s.StartMark(st)
			switch {
			case c.want == "" && got != nil:
				t.Fatalf("mark %+v, want none", *got)
			case c.want != "" && (got == nil || got.Commit != c.want):
				t.Fatalf("mark %+v, want commit %s", got, c.want)
			}
		})
	}
	// Without a private folder (in-process tests, no HOME): state's mark.
	s, st := newTaskFolder(t)
	s.Private = ""
	m := main
	st.History = &m
	if got := s.StartMark(st); got == nil || got.Commit != older {
		t.Fatalf("without a private folder: %+v", got)
	}
}
