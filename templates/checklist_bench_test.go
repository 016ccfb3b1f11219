package templates

import (
	"fmt"
	"strings"
	"testing"
)

// benchItems is a checklist of n features of about the size a planned
// list has: a description of a few hundred bytes, evidence on the passing
// half.
func benchItems(n int) []ChecklistItem {
	items := make([]ChecklistItem, n)
	for i := range items {
		items[i] = ChecklistItem{
			ID:          fmt.Sprintf("feature-%04d", i),
			Category:    []string{"functional", "docs", "api", "ui"}[i%4],
			Description: fmt.Sprintf("Feature %d: %s", i, strings.Repeat("the command does one more thing well; ", 8)),
		}
		if i%2 == 0 {
			items[i].Passes, items[i].Evidence = true, fmt.Sprintf("go test ./pkg%d -run TestFeature%d: ok", i, i)
		}
	}
	return items
}

// BenchmarkRenderChecklist2000 renders a 2,000-feature checklist in which
// each render differs from the one before in one item, as a turn does.
func BenchmarkRenderChecklist2000(b *testing.B) {
	items := benchItems(2000)
	if _, err := RenderChecklist("a goal", items); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		it := &items[(i*7)%len(items)]
		it.Passes = !it.Passes
		if _, err := RenderChecklist("a goal", items); err != nil {
			b.Fatal(err)
		}
	}
}
