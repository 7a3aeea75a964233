//go:build unix && !linux

package sim

import "syscall"

// childAttr: without Pdeathsig, children rely on their parent-liveness
// check alone; orphans get their own session.
func childAttr(orphan bool) *syscall.SysProcAttr {
	if orphan {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return nil
}
