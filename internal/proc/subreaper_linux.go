package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>; the
// syscall package does not name it.
const prSetChildSubreaper = 36

// BecomeSubreaper makes the calling process a child subreaper
// (prctl(PR_SET_CHILD_SUBREAPER)): a process that loses its parent below
// us (a double fork, a `setsid cmd &` whose shell has exited) is
// re-parented to us instead of to init, so [Orphans] can find it and
// [KillOrphans] can end it. The setting belongs to the whole process and
// lasts until it exits; call it once, early, from grub's main process.
//
// A subreaper must reap what it inherits: KillOrphans reaps the orphans
// it ends.
func BecomeSubreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return fmt.Errorf("proc: prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// Orphans returns the pids of our live children that are not in except:
// after [BecomeSubreaper], the processes re-parented to us, plus any child
// the caller started and did not list. Zombies are left out.
func Orphans(except map[int]bool) ([]int, error) {
	table, err := readProcTable()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var pids []int
	for pid, st := range table {
		if st.ppid == self && !except[pid] && st.alive() {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// KillOrphans ends every child of ours that is not in except, and all of
// their descendants: SIGTERM first, then, for whatever is still alive
// after KillGrace, SIGKILL. It reaps the children it ended (they are
// ours to wait for) and returns the pids it signalled.
//
// except must hold every child the caller still manages (a command being
// run, a long-lived agent process): those and their descendants are left
// alone, and are not waited for, so that their own Wait still works. Call
// it when a turn has ended and nothing else is starting commands, so that
// a command started meanwhile is not taken for an orphan.
func KillOrphans(except map[int]bool) ([]int, error) {
	var signalled []int
	seen := map[int]bool{}
	deadline := time.Now().Add(KillGrace)
	sig := syscall.SIGTERM
	// Each round finds the current tree (ending a process re-parents its
	// children to us), signals it and reaps our dead children. The bound
	// only guards against a tree that keeps forking faster than SIGKILL.
	for round := 0; round < 1000; round++ {
		table, err := readProcTable()
		if err != nil {
			return signalled, err
		}
		reapDead(table, except)
		targets := orphanTree(table, os.Getpid(), except)
		if len(targets) == 0 {
			return signalled, nil
		}
		if sig == syscall.SIGTERM && !time.Now().Before(deadline) {
			sig = syscall.SIGKILL
		}
		for _, pid := range targets {
			if sig == syscall.SIGTERM && seen[pid] {
				continue // asked once; wait for it
			}
			if err := syscall.Kill(pid, sig); err == nil && !seen[pid] {
				seen[pid] = true
				signalled = append(signalled, pid)
			}
		}
		time.Sleep(pollInterval)
	}
	return signalled, errors.New("proc: orphans kept appearing; gave up ending them")
}

// orphanTree returns the live processes below self that do not descend
// from a pid in except.
func orphanTree(table map[int]statInfo, self int, except map[int]bool) []int {
	children := map[int][]int{}
	for pid, st := range table {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var out []int
	var walk func(int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			if pid == self && except[c] {
				continue
			}
			if table[c].alive() {
				out = append(out, c)
			}
			walk(c)
		}
	}
	walk(self)
	return out
}

// reapDead waits for our zombie children that are not in except.
func reapDead(table map[int]statInfo, except map[int]bool) {
	self := os.Getpid()
	for pid, st := range table {
		if st.ppid == self && !except[pid] && !st.alive() {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// statInfo is what the orphan search needs from /proc/<pid>/stat.
type statInfo struct {
	state byte
	ppid  int
}

func (s statInfo) alive() bool { return s.state != 'Z' && s.state != 'X' }

// readProcTable reads the state and parent of every process in /proc.
// Processes that vanish while it reads are skipped.
func readProcTable() (map[int]statInfo, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("proc: list processes: %w", err)
	}
	table := make(map[int]statInfo, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if st, ok := parseStatParent(b); ok {
			table[pid] = st
		}
	}
	return table, nil
}

// parseStatParent parses the state and ppid fields of a /proc/<pid>/stat
// line, counting fields from the last ')' as parseStat does.
func parseStatParent(b []byte) (statInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statInfo{}, false
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return statInfo{}, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil {
		return statInfo{}, false
	}
	return statInfo{state: fields[0][0], ppid: ppid}, true
}

// StartTime returns the start time of process pid (field 22 of
// /proc/<pid>/stat, in clock ticks since boot), which together with the
// pid names one process: a pid reused later has another start time. ok is
// false when the process is gone or a zombie.
func StartTime(pid int) (start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStartTime(b)
}

func parseStartTime(b []byte) (uint64, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	// Fields after ')' start at field 3 (state); starttime is field 22.
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 20 || len(fields[0]) != 1 || fields[0][0] == 'Z' || fields[0][0] == 'X' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(fields[19]), 10, 64)
	return v, err == nil
}

// Children returns our live child processes (after [BecomeSubreaper], the
// orphans re-parented to us included), each with its start time, so that
// a later process can end them without hitting a reused pid
// ([KillIfSame]).
func Children() (map[int]uint64, error) {
	pids, err := Orphans(nil)
	if err != nil {
		return nil, err
	}
	out := make(map[int]uint64, len(pids))
	for _, pid := range pids {
		if start, ok := StartTime(pid); ok {
			out[pid] = start
		}
	}
	return out, nil
}

// KillIfSame sends SIGKILL to process pid, and to its process group when
// it leads one, if it is still the process that started at start. It
// reports whether it sent anything. A process of another user is skipped
// (the kill fails).
func KillIfSame(pid int, start uint64) bool {
	if pid <= 1 || pid == os.Getpid() {
		return false
	}
	if now, ok := StartTime(pid); !ok || now != start {
		return false
	}
	if _, pgrp, ok := procStat(pid); ok && pgrp == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	return syscall.Kill(pid, syscall.SIGKILL) == nil
}
