package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/templates"
)

// chart is an SVG chart as plain shapes, laid out here and drawn by the
// "chart" template: geometry in Go, markup in the template.
type chart struct {
	Title         string // the accessible name of the figure
	Width, Height int
	Lines         []line
	Bars          []bar
	Labels        []label
	Polyline      string // "x,y x,y …", the burn-up line
	Dots          []dot
}

type line struct {
	X1, Y1, X2, Y2 string
	Class          string
}

type bar struct {
	X, Y, W, H string
	Class      string
	Title      string
}

type label struct {
	X, Y   string
	Anchor string
	Text   string
}

type dot struct {
	CX, CY string
	Title  string
}

const (
	chartW, chartH          = 640, 200
	marginL, marginR        = 44, 12
	marginT, marginB        = 12, 28
	plotW                   = chartW - marginL - marginR
	plotH                   = chartH - marginT - marginB
	plotBottom              = marginT + plotH
	maxXLabels              = 12
	classAxis, classGrid    = "axis", "grid"
	classInput, classOutput = "in", "out"
	classCost               = "cost"
)

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// slotX is the centre of turn i's slot among n.
func slotX(i, n int) float64 { return marginL + (float64(i)+0.5)*plotW/float64(n) }

// frame draws the axes, the y labels (0 and top) and turn labels.
func frame(c *chart, turns []Turn, top string) {
	n := len(turns)
	c.Lines = append(c.Lines,
		line{X1: num(marginL), Y1: num(plotBottom), X2: num(marginL + plotW), Y2: num(plotBottom), Class: classAxis},
		line{X1: num(marginL), Y1: num(marginT), X2: num(marginL), Y2: num(plotBottom), Class: classAxis})
	c.Labels = append(c.Labels,
		label{X: num(marginL - 4), Y: num(plotBottom), Anchor: "end", Text: "0"},
		label{X: num(marginL - 4), Y: num(marginT + 8), Anchor: "end", Text: top})
	step := max(1, (n+maxXLabels-1)/maxXLabels)
	for i, t := range turns {
		if i%step == 0 || i == n-1 {
			c.Labels = append(c.Labels, label{X: num(slotX(i, n)), Y: num(plotBottom + 16), Anchor: "middle", Text: "#" + strconv.Itoa(t.Iteration)})
		}
	}
}

// burnUp is the passing features after each turn, against the total. A
// turn without a ledger line carries the count before it. ok is false when
// there is nothing to draw: no turns, or no feature passed after any of
// them (an empty chart is left out of the page).
func burnUp(turns []Turn, total int) (c chart, ok bool) {
	c = chart{Title: "Passing features after each turn", Width: chartW, Height: chartH}
	for _, t := range turns {
		if t.Progress != nil {
			total = max(total, t.Progress.Total)
			ok = ok || t.Progress.Passing > 0
		}
	}
	if !ok || total == 0 {
		return c, false
	}
	frame(&c, turns, harness.FormatCount(int64(total)))
	c.Lines = append(c.Lines, line{X1: num(marginL), Y1: num(marginT), X2: num(marginL + plotW), Y2: num(marginT), Class: classGrid})
	y := func(p int) float64 {
		if total == 0 {
			return plotBottom
		}
		return plotBottom - float64(p)*plotH/float64(total)
	}
	var pts []string
	passing := 0
	for i, t := range turns {
		if t.Progress != nil {
			passing = t.Progress.Passing
		}
		x := slotX(i, len(turns))
		pts = append(pts, num(x)+","+num(y(passing)))
		c.Dots = append(c.Dots, dot{CX: num(x), CY: num(y(passing)), Title: fmt.Sprintf("turn %d: %d of %d features pass", t.Iteration, passing, total)})
	}
	c.Polyline = strings.Join(pts, " ")
	return c, true
}

// tokenBars is the tokens of each turn (uncached input and output
// stacked); turns without a ledger line get an empty slot. ok is false
// when no turn counted a token.
func tokenBars(turns []Turn) (c chart, ok bool) {
	c = chart{Title: "Tokens per turn", Width: chartW, Height: chartH}
	var top int64
	for _, t := range turns {
		if t.Usage != nil && t.Recorded {
			top = max(top, t.Usage.Tokens)
		}
	}
	if top <= 0 {
		return c, false
	}
	frame(&c, turns, compact(top))
	n := len(turns)
	for i, t := range turns {
		if t.Usage == nil || !t.Recorded {
			continue
		}
		u := t.Usage
		w := max(plotW/float64(n)*0.7, 1)
		x := slotX(i, n) - w/2
		in := float64(u.InputTokens-u.CachedInputTokens) * plotH / float64(top)
		out := float64(u.OutputTokens) * plotH / float64(top)
		title := fmt.Sprintf("turn %d: %s tokens (input %s, of which cached %s; output %s)", t.Iteration,
			harness.FormatCount(u.Tokens), harness.FormatCount(u.InputTokens), harness.FormatCount(u.CachedInputTokens), harness.FormatCount(u.OutputTokens))
		c.Bars = append(c.Bars,
			bar{X: num(x), Y: num(plotBottom - in), W: num(w), H: num(in), Class: classInput, Title: title},
			bar{X: num(x), Y: num(plotBottom - in - out), W: num(w), H: num(out), Class: classOutput, Title: title})
	}
	return c, true
}

// costBars is the reported cost of each turn; ok is false when no turn
// reported a cost above zero.
func costBars(turns []Turn) (c chart, ok bool) {
	c = chart{Title: "Cost per turn", Width: chartW, Height: chartH}
	top := 0.0
	for _, t := range turns {
		if t.Usage != nil && t.Usage.CostUSD != nil {
			top = max(top, *t.Usage.CostUSD)
		}
	}
	if top <= 0 {
		return c, false
	}
	frame(&c, turns, templates.FormatUSD(top))
	n := len(turns)
	for i, t := range turns {
		if t.Usage == nil || t.Usage.CostUSD == nil {
			continue
		}
		w := max(plotW/float64(n)*0.7, 1)
		h := *t.Usage.CostUSD * plotH / top
		c.Bars = append(c.Bars, bar{X: num(slotX(i, n) - w/2), Y: num(plotBottom - h), W: num(w), H: num(h), Class: classCost,
			Title: fmt.Sprintf("turn %d: %s", t.Iteration, templates.FormatUSD(*t.Usage.CostUSD))})
	}
	return c, true
}

// compact writes a count as 950, 12.3k or 4.5M.
func compact(n int64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 10_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 0, 64) + "k"
	case n >= 1_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}
