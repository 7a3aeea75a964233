package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// loopServerEnv turns the test binary into a benchmark's SSE server in a
// process of its own: `BAKEOFF_LOOP_SERVER=aligned|staggered loadgen.test`
// prints its URL, serves the overhead benchmark's paced streams and, at
// /times, the flush times it recorded, and exits when its stdin closes.
// Flush times are Unix nanoseconds, so they compare with the client's across
// processes. Mode "burst" serves the CPU benchmark's streams instead
// (cpuChunks chunks, each flushed on its own, unpaced); it is also the
// server scripts/clientcpu.sh measures both clients against.
const loopServerEnv = "BAKEOFF_LOOP_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(loopServerEnv); mode != "" {
		os.Exit(serveLoop(mode))
	}
	os.Exit(m.Run())
}

func serveLoop(mode string) int {
	ls := &loopServer{chunks: overheadChunks, gap: overheadGap, stagger: mode == "staggered", first: map[string]int64{}, done: map[string]int64{}}
	if mode == "burst" {
		ls = &loopServer{chunks: cpuChunks}
	}
	if mode == "steps" {
		ls = &loopServer{chunks: cpuChunks, gap: cpuStep, steps: true}
	}
	mux := http.NewServeMux()
	mux.Handle("/", ls)
	mux.HandleFunc("/times", func(w http.ResponseWriter, _ *http.Request) {
		first, done := ls.times()
		json.NewEncoder(w).Encode(map[string]map[string]int64{"first": first, "done": done})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("http://" + ln.Addr().String())
	go http.Serve(ln, mux)
	bufio.NewReader(os.Stdin).ReadString('\n') // until the benchmark closes it
	return 0
}

// startLoopServerProcess starts the loop server in its own process, stopped
// when b ends, and returns its URL and a reader of its flush times.
func startLoopServerProcess(b *testing.B, mode string) (string, func() (first, done map[string]int64)) {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), loopServerEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the loop server printed no URL: %v", err)
	}
	url := strings.TrimSpace(line)
	return url, func() (first, done map[string]int64) {
		resp, err := http.Get(url + "/times")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var t map[string]map[string]int64
		if err := json.NewDecoder(resp.Body).Decode(&t); err != nil {
			b.Fatal(err)
		}
		return t["first"], t["done"]
	}
}
