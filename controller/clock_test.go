package controller

import (
	"sort"
	"sync"
	"time"
)

// fakeClock is a Clock that moves only when a test calls Advance. Its
// timers (After) fire on a buffered channel; its tickers deliver each tick
// before Advance goes on, so a heartbeat is reported deterministically.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []fakeTimer
	tickers []*fakeTicker
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

type fakeTicker struct {
	every   time.Duration
	next    time.Time
	c       chan time.Time
	stopped chan struct{}
	once    sync.Once
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After is time.After on the fake clock.
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{c.now.Add(d), ch})
	return ch
}

func (c *fakeClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTicker{every: d, next: c.now.Add(d), c: make(chan time.Time), stopped: make(chan struct{})}
	c.tickers = append(c.tickers, t)
	return t.c, func() { t.once.Do(func() { close(t.stopped) }) }
}

// Advance moves the clock on by d, firing every timer and tick that falls
// due, in time order.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for c.fireNext(end) {
	}
	c.mu.Lock()
	c.now = end
	c.mu.Unlock()
}

// fireNext fires the earliest timer or tick due by end, and reports
// whether there was one.
func (c *fakeClock) fireNext(end time.Time) bool {
	c.mu.Lock()
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	var tick *fakeTicker
	for _, t := range c.tickers {
		select {
		case <-t.stopped:
			continue
		default:
		}
		if !t.next.After(end) && (tick == nil || t.next.Before(tick.next)) {
			tick = t
		}
	}
	if len(c.timers) > 0 && !c.timers[0].at.After(end) && (tick == nil || !tick.next.Before(c.timers[0].at)) {
		t := c.timers[0]
		c.timers = c.timers[1:]
		c.now = t.at
		c.mu.Unlock()
		t.c <- t.at
		return true
	}
	if tick == nil {
		c.mu.Unlock()
		return false
	}
	at := tick.next
	c.now, tick.next = at, at.Add(tick.every)
	c.mu.Unlock()
	select {
	case tick.c <- at:
	case <-tick.stopped:
	}
	return true
}
