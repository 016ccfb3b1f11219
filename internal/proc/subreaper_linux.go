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
// It runs several times a turn (KillOrphans, Descendants, the process
// scanner), over every process of the machine: names unsorted, each stat
// file read with one open, one read and one close into a buffer shared by
// the whole pass, and parsed without allocating.
func readProcTable() (map[int]statInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("proc: list processes: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("proc: list processes: %w", err)
	}
	table := make(map[int]statInfo, len(names))
	buf := make([]byte, 4096) // a stat line is well under a page
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		n, ok := readStat("/proc/"+name+"/stat", buf)
		if !ok {
			continue
		}
		if st, ok := parseStatParent(buf[:n]); ok {
			table[pid] = st
		}
	}
	return table, nil
}

// readStat reads the file at path (a /proc stat file, which the kernel
// hands over whole in one read) into buf; ok is false when it cannot be
// read (the process is gone).
func readStat(path string, buf []byte) (int, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return n, err == nil && n > 0
	}
}

// parseStatParent parses the state and ppid fields of a /proc/<pid>/stat
// line, counting fields from the last ')' as parseStat does.
func parseStatParent(b []byte) (statInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statInfo{}, false
	}
	state, rest, ok := nextField(b[i+1:])
	if !ok || len(state) != 1 {
		return statInfo{}, false
	}
	ppidText, _, ok := nextField(rest)
	if !ok {
		return statInfo{}, false
	}
	ppid := 0
	for _, c := range ppidText {
		if c < '0' || c > '9' || ppid > 1<<40 {
			return statInfo{}, false
		}
		ppid = ppid*10 + int(c-'0')
	}
	return statInfo{state: state[0], ppid: ppid}, true
}

// nextField is the first field of b (runs of white space separate them,
// as bytes.Fields has it) and what follows it; ok is false when there is
// none.
func nextField(b []byte) (field, rest []byte, ok bool) {
	start := 0
	for start < len(b) && isStatSpace(b[start]) {
		start++
	}
	end := start
	for end < len(b) && !isStatSpace(b[end]) {
		end++
	}
	return b[start:end], b[end:], end > start
}

func isStatSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
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
