package templates

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// freshChecklist is RenderChecklist without the remembered lines.
func freshChecklist(t testing.TB, goal string, items []ChecklistItem) string {
	t.Helper()
	s, err := renderChecklist(goal, items, []string{checklistLines(items)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checklistLines are items' lines rendered afresh, joined.
func checklistLines(items []ChecklistItem) string {
	var b strings.Builder
	for _, it := range items {
		writeItemLine(&b, it)
	}
	return b.String()
}

// oddText is text with what the item lines escape or reshape: backticks,
// newlines, blank lines, leading and trailing spaces, tabs, CRs.
func oddText(r *rand.Rand) string {
	parts := []string{"a", "b", "`", "``", " ", "  ", "\n", "\n\n", "\t", "\r\n", "x y", "é", "-", "*", "[x]", ""}
	s := ""
	for range r.IntN(6) {
		s += parts[r.IntN(len(parts))]
	}
	return s
}

func randomItem(r *rand.Rand) ChecklistItem {
	it := ChecklistItem{
		ID:       fmt.Sprintf("f-%d", r.IntN(40)),
		Category: []string{"", "functional", "docs", " odd `cat` "}[r.IntN(4)],
		Passes:   r.IntN(2) == 0,
	}
	if r.IntN(3) == 0 {
		it.ID += oddText(r)
	}
	it.Description = oddText(r)
	if r.IntN(2) == 0 {
		it.Evidence = oddText(r)
	}
	return it
}

// mutate changes items the ways lists change between renders: an item
// edited, added, removed, moved, swapped or duplicated, or the list
// replaced, emptied or unplanned.
func mutate(r *rand.Rand, items []ChecklistItem) []ChecklistItem {
	switch k := r.IntN(20); {
	case k == 0:
		return nil
	case k == 1:
		return []ChecklistItem{}
	case k == 2:
		items = nil
		for range r.IntN(30) {
			items = append(items, randomItem(r))
		}
		return items
	case len(items) == 0 || k < 6:
		return slices.Insert(items, r.IntN(len(items)+1), randomItem(r))
	case k < 8:
		i := r.IntN(len(items))
		return slices.Delete(items, i, i+1+r.IntN(min(3, len(items)-i)))
	case k < 10:
		i, j := r.IntN(len(items)), r.IntN(len(items))
		items[i], items[j] = items[j], items[i]
	case k < 11:
		return append(items, items[r.IntN(len(items))])
	case k < 12:
		r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	case k < 16:
		// Changed in place, in the caller's slice, as the benchmark does.
		it := &items[r.IntN(len(items))]
		switch r.IntN(4) {
		case 0:
			it.Passes = !it.Passes
		case 1:
			it.Evidence = oddText(r)
		case 2:
			it.Description = oddText(r)
		default:
			it.ID = fmt.Sprintf("f-%d", r.IntN(40)) + oddText(r)
		}
	default:
		items[r.IntN(len(items))] = randomItem(r)
	}
	return items
}

// TestRenderChecklistRemembersIsFresh renders random sequences of lists
// and compares each checklist with one rendered afresh.
func TestRenderChecklistRemembersIsFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	goals := []string{"g", "add `login`\n\nto the API  ", "  spaced goal  ", ""}
	for seq := range 200 {
		var items []ChecklistItem
		goal := goals[0]
		for step := range 40 {
			items = mutate(r, items)
			if r.IntN(10) == 0 {
				goal = goals[r.IntN(len(goals))]
			}
			got, err := RenderChecklist(goal, items)
			if err != nil {
				t.Fatal(err)
			}
			if want := freshChecklist(t, goal, items); got != want {
				t.Fatalf("sequence %d, step %d: remembered render differs from a fresh one for %#v\ngot:\n%s\nwant:\n%s", seq, step, items, got, want)
			}
		}
	}
}

// TestRenderChecklistRendersOnlyNewItems checks that the lines of items
// the last call had are reused, wherever the items moved.
func TestRenderChecklistRendersOnlyNewItems(t *testing.T) {
	items := benchItems(100)
	rendered := func(items []ChecklistItem) int {
		t.Helper()
		got, err := RenderChecklist("g", items)
		if err != nil {
			t.Fatal(err)
		}
		if want := freshChecklist(t, "g", items); got != want {
			t.Fatalf("remembered render differs from a fresh one:\n%s\nwant:\n%s", got, want)
		}
		lastChecklist.mu.Lock()
		defer lastChecklist.mu.Unlock()
		return lastChecklist.rendered
	}
	rendered(nil)
	if n := rendered(items); n != 100 {
		t.Fatalf("first render rendered %d lines, want 100", n)
	}
	if n := rendered(items); n != 0 {
		t.Errorf("the same list rendered %d lines, want 0", n)
	}
	items[10].Passes = !items[10].Passes
	if n := rendered(items); n != 1 {
		t.Errorf("a list with one item changed rendered %d lines, want 1", n)
	}
	items = slices.Insert(items, 0, ChecklistItem{ID: "new", Description: "new"})
	items = slices.Delete(items, 50, 51)
	if n := rendered(items); n != 1 {
		t.Errorf("a list with one item added and one removed rendered %d lines, want 1", n)
	}
	slices.Reverse(items)
	if n := rendered(items); n != 0 {
		t.Errorf("a reversed list rendered %d lines, want 0", n)
	}
	if n := rendered(items[:50]); n != 0 {
		t.Errorf("half the list rendered %d lines, want 0", n)
	}
	lastChecklist.mu.Lock()
	kept := lastChecklist.items[:cap(lastChecklist.items)]
	lastChecklist.mu.Unlock()
	for i, it := range kept[50:] {
		if it != (ChecklistItem{}) {
			t.Fatalf("the cache keeps item %d of an older call: %+v", 50+i, it)
		}
	}
}

// TestRenderChecklistConcurrent renders different lists at once (run
// with -race).
func TestRenderChecklistConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			var items []ChecklistItem
			for range 200 {
				items = mutate(r, items)
				got, err := RenderChecklist("g", items)
				if err != nil {
					t.Error(err)
					return
				}
				want, err := renderChecklist("g", items, []string{checklistLines(items)})
				if err != nil || got != want {
					t.Errorf("concurrent render differs from a fresh one:\n%s\nwant:\n%s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
