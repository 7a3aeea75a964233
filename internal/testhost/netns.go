package testhost

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// netnsDir is where iproute2 keeps named network namespaces.
const netnsDir = "/var/run/netns"

// namePrefix starts every namespace this package makes; the owner's pid
// follows it, so a sweep can tell a dead owner's leftovers from a live
// neighbour's hosts.
const namePrefix = "bkt-"

// addrSecondOctet picks the 10.X.0.0/16 block the /30 links come from. It is
// not routed anywhere: both ends live on this machine.
const addrSecondOctet = 213

// ipTimeout bounds one iproute2 command; they finish in milliseconds unless
// the machine is wedged.
const ipTimeout = 30 * time.Second

// allocLock serialises address choice between test processes, so two
// packages testing at once never pick the same /30.
const allocLock = "/run/bakeoff-testhost.lock"

var nsNameRE = regexp.MustCompile(`^` + namePrefix + `(\d+)-([0-9a-f]+)$`)

// link is one namespace and the veth pair into it.
type link struct {
	ns      string // namespace name
	outer   string // veth end in the root namespace
	inner   string // veth end inside the namespace
	outerIP string
	innerIP string
}

func ipCmd(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

// newLink creates a namespace with loopback up and a /30 veth link to it.
func newLink(ctx context.Context) (*link, error) {
	lock, err := os.OpenFile(allocLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the address lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("taking the address lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	id := randomHex(3)
	l := &link{
		ns: fmt.Sprintf("%s%d-%s", namePrefix, os.Getpid(), id),
		// Interface names are at most 15 bytes: "bk" + 6 hex + side.
		outer: "bk" + id + "o",
		inner: "bk" + id + "i",
	}
	outer, inner, err := freeSubnet(ctx)
	if err != nil {
		return nil, err
	}
	l.outerIP, l.innerIP = outer, inner
	steps := [][]string{
		{"netns", "add", l.ns},
		{"link", "add", l.outer, "type", "veth", "peer", "name", l.inner, "netns", l.ns},
		{"addr", "add", l.outerIP + "/30", "dev", l.outer},
		{"link", "set", l.outer, "up"},
		{"-n", l.ns, "addr", "add", l.innerIP + "/30", "dev", l.inner},
		{"-n", l.ns, "link", "set", l.inner, "up"},
		{"-n", l.ns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := ipCmd(ctx, s...); err != nil {
			l.destroy(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("creating test host %s: %w", l.ns, err)
		}
	}
	return l, nil
}

// freeSubnet picks a random 10.213.X.Y/30 that no interface here uses.
func freeSubnet(ctx context.Context) (outer, inner string, err error) {
	out, err := exec.CommandContext(ctx, "ip", "-4", "-o", "addr", "show").Output()
	if err != nil {
		return "", "", fmt.Errorf("listing addresses: %w", err)
	}
	used := string(out)
	for range 100 {
		n, _ := rand.Int(rand.Reader, big.NewInt(256*64))
		x, y := n.Int64()/64, (n.Int64()%64)*4
		base := fmt.Sprintf("10.%d.%d.", addrSecondOctet, x)
		if strings.Contains(used, base+strconv.FormatInt(y+1, 10)+"/") {
			continue
		}
		return base + strconv.FormatInt(y+1, 10), base + strconv.FormatInt(y+2, 10), nil
	}
	return "", "", errors.New("no free /30 left in 10.213.0.0/16")
}

// setInner brings the namespace's end of the link up or down. Down is a cut
// cable: the root end loses carrier and packets vanish without an error, so
// a client only learns of it from its own timeouts and keepalives.
func (l *link) setInner(ctx context.Context, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	if err := ipCmd(ctx, "-n", l.ns, "link", "set", l.inner, state); err != nil {
		return fmt.Errorf("setting the link of %s %s: %w", l.ns, state, err)
	}
	return nil
}

// destroy kills every process in the namespace, then removes the veth pair
// and the namespace. It is safe on a half-made link.
func (l *link) destroy(ctx context.Context) error {
	var errs []error
	if err := killNamespace(ctx, l.ns); err != nil {
		errs = append(errs, err)
	}
	// Deleting the veth first makes its removal synchronous; deleting the
	// namespace alone frees it later, from a kernel work queue.
	_ = ipCmd(ctx, "link", "del", l.outer)
	if _, err := os.Stat(filepath.Join(netnsDir, l.ns)); err == nil {
		if err := ipCmd(ctx, "netns", "del", l.ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sweepLeftovers removes namespaces left by test processes that died
// before their cleanup ran. Namespaces of live processes are not touched.
func sweepLeftovers(ctx context.Context) {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := nsNameRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || processAlive(pid) {
			continue
		}
		l := &link{ns: e.Name(), outer: "bk" + m[2] + "o", inner: "bk" + m[2] + "i"}
		_ = l.destroy(ctx)
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
