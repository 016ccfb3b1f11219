package proc

import "os"

// Descendants returns every live process below us (children, their
// children, and after [BecomeSubreaper] the orphans re-parented to us and
// theirs), each with its start time, read from /proc in one pass, so that
// a later process can end them without hitting a reused pid
// ([KillIfSame]). A process that changes session (`setsid`) is still
// found: only the parent chain counts.
func Descendants() (map[int]uint64, error) {
	table, err := readProcTable()
	if err != nil {
		return nil, err
	}
	pids := orphanTree(table, os.Getpid(), nil)
	out := make(map[int]uint64, len(pids))
	for _, pid := range pids {
		if start, ok := StartTime(pid); ok {
			out[pid] = start
		}
	}
	return out, nil
}
