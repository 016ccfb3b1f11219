package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium finds a Chromium to render the report with. GRUB_BROWSER_TEST=1
// (make test-browser) makes a missing browser a failure instead of a skip.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("GRUB_BROWSER_TEST") == "1" {
		t.Fatal("no chromium on PATH; make test-browser installs Debian's chromium")
	}
	t.Skip("skipped: no chromium on PATH (make test-browser installs Debian's chromium and runs this test)")
	return ""
}

// TestReportInBrowser renders the page in headless Chromium: the DOM it
// builds has every feature, every turn and the charts, and a screenshot
// is taken.
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, Build(fixture())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-dev-shm-usage",
			"--user-data-dir=" + filepath.Join(dir, "profile")}
		cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
		}
		return stdout.String()
	}
	dom := run("--dump-dom", "file://"+page)
	for _, f := range fixture().Features.Features {
		if !strings.Contains(dom, `id="feature-`+f.ID+`"`) {
			t.Errorf("the rendered DOM lacks feature %s", f.ID)
		}
	}
	for _, want := range []string{`<svg`, `<polyline`, `<rect`, `id="turn-5"`, `&lt;script&gt;alert(1)&lt;/script&gt;`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered DOM lacks %s", want)
		}
	}
	if strings.Contains(dom, "<script>alert") {
		t.Error("the agent's script became an element")
	}
	shot := filepath.Join(dir, "report.png")
	run("--screenshot="+shot, "--window-size=1200,2400", "file://"+page)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 1000 {
		t.Fatalf("no screenshot: %v", err)
	}
	if out := os.Getenv("GRUB_REPORT_SCREENSHOT"); out != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
}
