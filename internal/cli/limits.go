package cli

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
)

// limitFlags declare, parse and check the limit flags. For grub start
// (forNewTask) they set every limit of the new task, each flag counting
// with its default; for grub edit and grub resume they change the limits
// of an existing task, and only the flags given count.
type limitFlags struct {
	forNewTask bool

	maxIter, maxFail, maxInitFail, maxBlocked int
	minFeatures, maxFeatures                  int // start only
	regressionChecks                          int
	tokenBudget                               int64
	costBudget                                float64 // US dollars
	timeBudget, turnTimeout, initTimeout      time.Duration
	protect                                   []string // --protect globs
}

func (l *limitFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	protect := "keep the files matching `glob` as they are at each turn's start: a turn that changes, deletes or renames one fails and grub puts it back; ** matches any folders, e.g. '**/*_test.go' (repeatable)"
	if !l.forNewTask {
		protect += "; replaces the task's list, '' clears it"
	}
	fl.StringArrayVar(&l.protect, "protect", nil, protect)
	if !l.forNewTask {
		fl.IntVar(&l.maxIter, "max-iter", 0, "set the iteration limit (turns in all, the initializer's included)")
		fl.IntVar(&l.maxFail, "max-fail", 0, "set the limit of consecutive failed execution turns")
		fl.IntVar(&l.maxInitFail, "max-init-fail", 0, "set the limit of consecutive failed initializer turns")
		fl.IntVar(&l.maxBlocked, "max-blocked", 0, "set how many blocked reports in a row grub accepts as blocked")
		fl.Int64Var(&l.tokenBudget, "token-budget", 0, "set the token budget (0 = none)")
		fl.Float64Var(&l.costBudget, "cost-budget", 0, "set the cost budget in US dollars, e.g. 5 or 12.50 (0 = none; claude only)")
		fl.DurationVar(&l.timeBudget, "time-budget", 0, "set the time budget, e.g. 45m or 2h (0 = none)")
		fl.DurationVar(&l.turnTimeout, "turn-timeout", 0, "set the longest one agent turn may run, e.g. 45m")
		fl.DurationVar(&l.initTimeout, "init-timeout", 0, "set the longest init.sh or a verify command may run, e.g. 10m")
		fl.IntVar(&l.regressionChecks, "regression-checks", 0, "set how many other passing features' checks grub runs again each execution turn (0 = none)")
		return
	}
	d := harness.DefaultLimits()
	fl.IntVar(&l.maxIter, "max-iter", d.MaxIterations, "the most turns the task may take, the initializer's included")
	fl.IntVar(&l.maxFail, "max-fail", d.MaxConsecutiveFailures, "consecutive failed execution turns that end the task as failed")
	fl.IntVar(&l.maxInitFail, "max-init-fail", d.MaxInitializerFailures, "consecutive failed initializer turns that end the task as failed")
	fl.IntVar(&l.maxBlocked, "max-blocked", d.MaxBlocked, "consecutive blocked reports before grub accepts that the task is blocked")
	fl.Int64Var(&l.tokenBudget, "token-budget", 0, "tokens the task may spend (input - cached input + output); 0 = no budget")
	fl.Float64Var(&l.costBudget, "cost-budget", 0, "US dollars the task may spend, as the backend reports cost (claude only), e.g. 5 or 12.50; 0 = no budget")
	fl.DurationVar(&l.timeBudget, "time-budget", 0, "wall-clock time the task may run, e.g. 45m or 3h; 0 = no budget")
	fl.IntVar(&l.minFeatures, "min-features", d.MinFeatures, "the fewest features the initializer may plan")
	fl.IntVar(&l.maxFeatures, "max-features", d.MaxFeatures, "the most features the initializer may plan")
	fl.DurationVar(&l.turnTimeout, "turn-timeout", time.Duration(d.TurnTimeoutSeconds)*time.Second, "the longest one agent turn may run before its process group is killed")
	fl.DurationVar(&l.initTimeout, "init-timeout", time.Duration(d.InitTimeoutSeconds)*time.Second, "the longest init.sh or a verify command may run")
	fl.IntVar(&l.regressionChecks, "regression-checks", d.RegressionChecks, "other passing features whose checks grub runs again each execution turn, least recently checked first (0 = none)")
}

// countFlag is a limit flag that takes a count of at least 1.
type countFlag struct {
	name string
	what string // the limit, in the error message of edit and resume
	v    *int
	out  **int // where a change goes; nil for the feature counts of start
}

// limits returns the limits of a new task (start), checked.
func (l *limitFlags) limits(cmd *cobra.Command) (harness.Limits, error) {
	c, err := l.changes(cmd)
	if err != nil {
		return harness.Limits{}, err
	}
	lim := harness.Limits{MinFeatures: l.minFeatures, MaxFeatures: l.maxFeatures}
	c.Apply(&lim)
	return lim, nil
}

// changes returns the limits the flags set, checked: all of them for a new
// task, else those given on the command line.
func (l *limitFlags) changes(cmd *cobra.Command) (harness.LimitChanges, error) {
	var c harness.LimitChanges
	fl := cmd.Flags()
	given := func(name string) bool { return l.forNewTask || fl.Changed(name) }
	counts := []countFlag{
		{"max-iter", "the iteration limit", &l.maxIter, &c.MaxIterations},
		{"max-fail", "the consecutive-failure limit", &l.maxFail, &c.MaxConsecutiveFailures},
		{"max-init-fail", "the initializer-failure limit", &l.maxInitFail, &c.MaxInitializerFailures},
		{"max-blocked", "the blocked limit", &l.maxBlocked, &c.MaxBlocked},
	}
	if l.forNewTask {
		counts = append(counts, countFlag{"min-features", "", &l.minFeatures, nil}, countFlag{"max-features", "", &l.maxFeatures, nil})
	}
	for _, f := range counts {
		switch {
		case !given(f.name):
		case *f.v < 1 && l.forNewTask:
			return c, usageErrorf("--%s %d: must be at least 1", f.name, *f.v)
		case *f.v < 1:
			return c, usageErrorf("--%s %d: %s must be at least 1", f.name, *f.v, f.what)
		case f.out != nil:
			*f.out = f.v
		}
	}
	if l.forNewTask && l.minFeatures > l.maxFeatures {
		return c, usageErrorf("--min-features %d is above --max-features %d", l.minFeatures, l.maxFeatures)
	}
	if given("token-budget") {
		if l.tokenBudget < 0 {
			none := "0 removes it"
			if l.forNewTask {
				none = "0 means none"
			}
			return c, usageErrorf("--token-budget %d: the budget cannot be negative; %s", l.tokenBudget, none)
		}
		c.TokenBudget = &l.tokenBudget
	}
	if given("cost-budget") {
		if l.costBudget < 0 || math.IsNaN(l.costBudget) || math.IsInf(l.costBudget, 0) {
			return c, usageErrorf("--cost-budget %v: give US dollars, e.g. 5 or 12.50; 0 means none", l.costBudget)
		}
		c.CostBudgetUSD = &l.costBudget
	}
	if given("regression-checks") {
		if l.regressionChecks < 0 {
			return c, usageErrorf("--regression-checks %d: give a count of 0 or more (0 turns the sweep off)", l.regressionChecks)
		}
		c.RegressionChecks = &l.regressionChecks
	}
	if given("time-budget") {
		secs, err := wholeSeconds(l.timeBudget)
		if err != nil {
			return c, usageErrorf("--time-budget %s: %v", l.timeBudget, err)
		}
		c.TimeBudgetSeconds = &secs
	}
	if given("protect") {
		if err := l.protectChange(&c); err != nil {
			return c, err
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
		out  **int64
	}{
		{"turn-timeout", l.turnTimeout, &c.TurnTimeoutSeconds},
		{"init-timeout", l.initTimeout, &c.InitTimeoutSeconds},
	} {
		if given(f.name) {
			if f.v < time.Second || f.v%time.Second != 0 {
				return c, usageErrorf("--%s %s: use whole seconds of at least 1s, e.g. 90s or 30m", f.name, f.v)
			}
			secs := int64(f.v / time.Second)
			*f.out = &secs
		}
	}
	return c, nil
}

// wholeSeconds converts a --time-budget value to seconds.
func wholeSeconds(d time.Duration) (int64, error) {
	switch {
	case d < 0:
		return 0, errors.New("the budget cannot be negative; 0 removes it")
	case d%time.Second != 0:
		return 0, errors.New("use whole seconds, e.g. 90s, 45m or 2h")
	}
	return int64(d / time.Second), nil
}

// protectChange sets the --protect globs given, checked; empty entries
// are dropped, so that an empty --protect clears the list.
func (l *limitFlags) protectChange(c *harness.LimitChanges) error {
	globs := []string{}
	for _, g := range l.protect {
		if g == "" {
			continue
		}
		if err := controller.ValidProtect(g); err != nil {
			return usageErrorf("%v", err)
		}
		if !slices.Contains(globs, g) {
			globs = append(globs, g)
		}
	}
	c.Protect = &globs
	return nil
}
