package remote

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// proxyStderrMax bounds how much of a ProxyCommand's stderr is kept for
// error messages.
const proxyStderrMax = 4 << 10

// proxyCommandTokens expands the tokens OpenSSH allows in ProxyCommand:
// %h host, %p port, %r remote user, %n the name as written, %%.
func proxyCommandTokens(cmd string, h hop, alias string) string {
	r := strings.NewReplacer("%%", "%", "%h", h.Host, "%p", strconv.Itoa(h.Port), "%r", h.User, "%n", alias)
	return r.Replace(cmd)
}

// startProxyCommand runs h's ProxyCommand as OpenSSH does (`sh -c "exec
// CMD"`) and returns a connection over its stdin and stdout. The command
// lives until the connection is closed, not as long as the dial's context:
// it carries the whole SSH session.
func startProxyCommand(h hop) (net.Conn, error) {
	// Pipes of our own, not StdinPipe/StdoutPipe: Wait closes those when
	// the command exits, which could drop the last bytes it wrote.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ProxyCommand %q: %w", h.ProxyCommand, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("ProxyCommand %q: %w", h.ProxyCommand, err)
	}
	cmd := exec.Command("/bin/sh", "-c", "exec "+h.ProxyCommand)
	cmd.Stdin, cmd.Stdout = inR, outW
	// Its own process group: a Ctrl-C at the terminal goes to bakeoff, which
	// still needs the link to stop its server, not to the link itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c := &proxyConn{cmd: cmd, command: h.ProxyCommand, in: inW, out: outR, exited: make(chan struct{})}
	cmd.Stderr = &c.stderr
	// A child of the command that keeps stderr open must not hold Close.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	inR.Close() // the command's ends; it holds its own copies now
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting ProxyCommand %q: %w", h.ProxyCommand, err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// proxyConn is a net.Conn over a ProxyCommand's pipes. Deadlines are not
// supported; the SSH layer bounds its waits by closing the connection.
type proxyConn struct {
	cmd     *exec.Cmd
	command string // as run, tokens expanded
	in      *os.File
	out     *os.File
	closed  atomic.Bool
	stderr  boundedBuffer
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

func (c *proxyConn) Read(p []byte) (int, error) {
	n, err := c.out.Read(p)
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
		return n, c.ended(err)
	}
	return n, err
}

func (c *proxyConn) Write(p []byte) (int, error) {
	n, err := c.in.Write(p)
	if err != nil {
		return n, c.ended(err)
	}
	return n, nil
}

// ended explains a closed pipe by the command's exit and stderr, so that a
// bastion that refused us is not reported as a bare EOF.
func (c *proxyConn) ended(err error) error {
	if c.closed.Load() {
		return err
	}
	select {
	case <-c.exited:
	case <-time.After(100 * time.Millisecond):
		return err
	}
	msg := strings.TrimSpace(c.stderr.String())
	switch {
	case c.waitErr != nil && msg != "":
		return fmt.Errorf("ProxyCommand %s (%v): %s: %w", c.command, c.waitErr, msg, err)
	case c.waitErr != nil:
		return fmt.Errorf("ProxyCommand %s (%v): %w", c.command, c.waitErr, err)
	case msg != "":
		return fmt.Errorf("ProxyCommand %s exited: %s: %w", c.command, msg, err)
	}
	return fmt.Errorf("ProxyCommand %s exited: %w", c.command, err)
}

// Close ends the session: stdin is closed so a well-behaved command exits,
// and after a short grace the command is killed by its pid.
func (c *proxyConn) Close() error {
	c.once.Do(func() {
		c.closed.Store(true)
		c.in.Close()
		select {
		case <-c.exited:
		case <-time.After(time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		c.out.Close()
	})
	return nil
}

func (c *proxyConn) LocalAddr() net.Addr  { return proxyAddr("bakeoff") }
func (c *proxyConn) RemoteAddr() net.Addr { return proxyAddr(c.command) }

func (c *proxyConn) SetDeadline(time.Time) error      { return errNoDeadline }
func (c *proxyConn) SetReadDeadline(time.Time) error  { return errNoDeadline }
func (c *proxyConn) SetWriteDeadline(time.Time) error { return errNoDeadline }

var errNoDeadline = errors.New("ProxyCommand connection: deadlines are not supported")

type proxyAddr string

func (a proxyAddr) Network() string { return "proxycommand" }
func (a proxyAddr) String() string  { return string(a) }

// boundedBuffer keeps the first proxyStderrMax bytes written to it; the
// command's writes never block or fail on it.
type boundedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := proxyStderrMax - b.b.Len(); room > 0 {
		b.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
