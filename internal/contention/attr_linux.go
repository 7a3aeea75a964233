package contention

import "syscall"

// workerAttr puts a worker in a process group of its own, which Stop kills
// whole, and has the kernel kill it if the test that started it dies first.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// burstAttr has a spawner's burst die with it; it stays in the spawner's
// process group.
func burstAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// campaignAttr has a campaign's bakeoff run stopped (SIGTERM: it stops its
// server and keeps what it measured) if the test dies first.
func campaignAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
