package remote

import (
	"io"
	"net"
	"os"
	"strconv"
	"testing"
)

// netcatEnv turns the test binary into a netcat for ProxyCommand tests:
// `env BAKEOFF_TEST_NETCAT=PIDFILE remote.test HOST:PORT` writes its pid
// to PIDFILE and copies stdin to the address and the address to stdout.
const netcatEnv = "BAKEOFF_TEST_NETCAT"

func TestMain(m *testing.M) {
	if pidFile := os.Getenv(netcatEnv); pidFile != "" {
		os.Exit(netcat(pidFile, os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

func netcat(pidFile, addr string) int {
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		os.Stderr.WriteString("netcat: " + err.Error() + "\n")
		return 1
	}
	go func() {
		io.Copy(c, os.Stdin)
		c.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(os.Stdout, c)
	return 0
}
