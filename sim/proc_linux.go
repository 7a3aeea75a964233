package sim

import "syscall"

// childAttr makes a scheduler child die with its parent (SIGTERM on the
// parent's death, which the child turns into an exit), or, for the
// orphan-children fault, puts it in its own session so that stopping the
// server's process group misses it.
func childAttr(orphan bool) *syscall.SysProcAttr {
	if orphan {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
