package featurelist

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

// TestEncoderIsMarshal changes a list one feature (or several) at a time
// at random, valid and invalid changes alike, and checks that Encoder
// gives Marshal's bytes and errors every time, and that a one-feature
// change takes the re-encoding path.
func TestEncoderIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var e Encoder
	l := base()
	for step := range 400 {
		next := l.Clone()
		n := 1
		if rng.IntN(8) == 0 {
			n = 2 + rng.IntN(3)
		}
		for range n {
			f := &next.Features[rng.IntN(len(next.Features))]
			switch rng.IntN(6) {
			case 0:
				f.Passes, f.Evidence = !f.Passes, ev(fmt.Sprintf("note %d <&> \"q\"", step))
			case 1:
				f.Evidence = nil
			case 2:
				f.Steps = append(f.Steps, fmt.Sprintf("step %d", step))
			case 3:
				f.Steps = nil
			case 4:
				f.ID = "Bad Id" // invalid
			case 5:
				f.Description = fmt.Sprintf("described again %d", step)
			}
		}
		if rng.IntN(40) == 0 {
			next.Goal = fmt.Sprintf("goal %d", step)
		}
		got, gotErr := e.Marshal(&next)
		want, wantErr := Marshal(&next)
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("step %d: Encoder gave %v\n%s\nMarshal gave %v\n%s", step, gotErr, got, wantErr, want)
		}
		var se *schemas.Error
		if gotErr != nil && !errors.As(gotErr, &se) {
			t.Fatalf("step %d: error is %T, want *schemas.Error", step, gotErr)
		}
		if gotErr == nil {
			l = &next
		}
	}
	if e.reencoded < 200 {
		t.Errorf("only %d changes were re-encoded from the last bytes", e.reencoded)
	}
}

// TestEncoderKeepsNoAlias checks that changing a list in place after
// Marshal (SetGoal does) is seen by the next call.
func TestEncoderKeepsNoAlias(t *testing.T) {
	var e Encoder
	l := base()
	if _, err := e.Marshal(l); err != nil {
		t.Fatal(err)
	}
	l.Features[0].Steps[0] = "changed in place"
	got, err := e.Marshal(l)
	want, _ := Marshal(l)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after an in-place change: %v\n%s\nwant\n%s", err, got, want)
	}
}
