package gitx

import (
	"testing"

	"github.com/go-git/go-git/v5/config"
)

// A commit flushes the index and the branch only when core.fsync asks for
// them, as git does: its default set holds neither.
func TestFsyncsFollowCoreFsync(t *testing.T) {
	for _, c := range []struct {
		value string
		want  fsyncs
	}{
		{"", fsyncs{}},
		{"default", fsyncs{}},
		{"objects,pack,loose-object", fsyncs{}},
		{"index", fsyncs{index: true}},
		{"reference", fsyncs{ref: true}},
		{"committed", fsyncs{ref: true}},
		{"added", fsyncs{index: true, ref: true}},
		{" all ", fsyncs{index: true, ref: true}},
		{"index, none", fsyncs{index: true}}, // none empties the default set only
		{"-index,reference", fsyncs{ref: true}},
	} {
		local := config.NewConfig()
		if c.value != "" {
			local.Raw.Section("core").SetOption("fsync", c.value)
		}
		if got := (&gitConfig{scopes: []*config.Config{local}}).fsyncs(); got != c.want {
			t.Errorf("core.fsync=%q: %+v, want %+v", c.value, got, c.want)
		}
	}
}
