//go:build unix && !linux

package contention

import "syscall"

// workerAttr puts a worker in a process group of its own, which Stop kills
// whole; without a parent-death signal, WorkerLifetime bounds it.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// burstAttr: a burst stays in its spawner's process group and ends by
// itself within BurstMax.
func burstAttr() *syscall.SysProcAttr { return nil }

// campaignAttr: without a parent-death signal, a campaign whose test died
// runs to its end.
func campaignAttr() *syscall.SysProcAttr { return nil }
