// Package testhost makes hosts for end-to-end tests out of this machine: a
// network namespace joined to the root namespace by a veth pair, with a real
// OpenSSH sshd listening inside it. A campaign reaches such a host exactly as
// it reaches a GPU box, through an ~/.ssh/config alias and a known_hosts
// entry, so links can be cut, sshd killed and host keys changed under a real
// `bakeoff run`.
//
// Every name it creates starts with a per-process prefix ("bkt-PID-"), and
// every host is torn down in t.Cleanup: the processes inside the namespace
// (sshd and whatever was started through it: servers, sweeps, orphans), the
// veth pair and the namespace. Leftovers of dead test processes are swept at
// the next New. It needs root and iproute2; without them New skips the test
// and says why.
package testhost
