package harness

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/schemas"
)

// LoadFeatureListAs returns the accepted list for a file that holds it
// byte for byte, and parses anything else as LoadFeatureList does.
func TestLoadFeatureListAs(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("count features"))
	accepted := &featurelist.List{Version: 1, Goal: "count features", Features: []featurelist.Feature{
		{ID: "a", Category: "c", Description: "d", Steps: []string{"s"}}}}
	if _, _, err := s.LoadFeatureListAs(st.ID, accepted); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want ErrNotExist", err)
	}
	if err := s.SaveFeatureList(st.ID, accepted); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.LoadFeatureListAs(st.ID, accepted)
	if err != nil || got != accepted {
		t.Fatalf("same bytes: %p, %v; want the accepted list itself", got, err)
	}
	path := s.Path(st.ID, FileFeatureList)
	data, _ := os.ReadFile(path)
	flipped := strings.Replace(string(data), `"passes": false`, `"passes": true`, 1)
	if err := os.WriteFile(path, []byte(flipped), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err = s.LoadFeatureListAs(st.ID, accepted)
	if err != nil || got == accepted || !got.Features[0].Passes {
		t.Fatalf("edited file: %+v, %v; want the file's list", got, err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(flipped, `"a"`, `"Bad_Id"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var se *schemas.Error
	if _, _, err := s.LoadFeatureListAs(st.ID, accepted); !errors.As(err, &se) {
		t.Fatalf("invalid file: %v, want a *schemas.Error", err)
	}
}
