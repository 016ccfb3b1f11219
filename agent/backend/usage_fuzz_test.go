package backend

import "testing"

// FuzzParseUsageLines feeds arbitrary stderr to the GRUB_USAGE parser: it
// must never panic and never report negative usage.
func FuzzParseUsageLines(f *testing.F) {
	for _, seed := range []string{
		"GRUB_USAGE {\"input\":10,\"cached\":2,\"output\":3}\n",
		"noise\nGRUB_USAGE {\"input\":1}\nGRUB_USAGE {\"output\":-1}\n",
		"GRUB_USAGE {bad", "GRUB_USAGE ", "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stderr []byte) {
		u, _ := parseUsageLines(stderr)
		if u.InputTokens < 0 || u.CachedInputTokens < 0 || u.OutputTokens < 0 {
			t.Fatalf("negative usage %+v from %q", u, stderr)
		}
	})
}
