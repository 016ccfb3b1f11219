package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

// stamp sets the ldflags variables for one test, as make build does.
func stamp(t *testing.T, version, commit, date, modified string) {
	t.Helper()
	old := [4]string{Version, Commit, Date, Modified}
	Version, Commit, Date, Modified = version, commit, date, modified
	t.Cleanup(func() { Version, Commit, Date, Modified = old[0], old[1], old[2], old[3] })
}

func versionOutput(t *testing.T, asJSON bool) string {
	t.Helper()
	var out bytes.Buffer
	opts := &VersionOptions{
		IO:         &IOStreams{Out: &out, ErrOut: &bytes.Buffer{}},
		JSON:       asJSON,
		Landlock:   func() (int, bool) { return 0, false },
		Namespaces: func() (bool, string) { return false, "user namespaces are off" },
	}
	if err := versionRun(opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestVersionPrintsTheStampedBuild(t *testing.T) {
	stamp(t, "v1.2.3", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "2026-12-02T10:00:00Z", "true")
	out := versionOutput(t, false)
	for _, want := range []string{
		"grub v1.2.3 (commit 0a1b2c3d4e5f+changes, 2026-12-02; go",
		"sandbox: Landlock not available; user and mount namespaces not available (user namespaces are off)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("grub version printed\n%s\nwant %q", out, want)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	stamp(t, "v1.2.3", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "2026-12-02T10:00:00Z", "")
	out := versionOutput(t, true)
	if err := schemas.Validate(schemas.VersionOutput, "grub version --json", []byte(out)); err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Version != "v1.2.3" || b.Commit != "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567" || b.Date != "2026-12-02T10:00:00Z" || b.Modified {
		t.Errorf("grub version --json = %+v", b)
	}
	if b.Sandbox.Namespaces || b.Sandbox.NamespacesMissing != "user namespaces are off" || b.Sandbox.LandlockABI != 0 {
		t.Errorf("sandbox features = %+v", b.Sandbox)
	}
}

func TestVersionWithoutStampHasNoCommit(t *testing.T) {
	stamp(t, "dev", "", "", "")
	// Tests are built without VCS stamping (go test never records it), so
	// the line names no commit rather than an empty one.
	if out := versionOutput(t, false); strings.Contains(out, "commit") || !strings.HasPrefix(out, "grub dev (go") {
		t.Errorf("grub version printed %q", out)
	}
}

// A release built where git could not be read is stamped "none" and the
// zero time: the line names no commit rather than those.
func TestVersionStampedWithoutGit(t *testing.T) {
	stamp(t, "v1.2.3", "none", "0001-01-01T00:00:00Z", "")
	if out := versionOutput(t, false); strings.Contains(out, "none") || strings.Contains(out, "0001") {
		t.Errorf("grub version printed %q", out)
	}
}
