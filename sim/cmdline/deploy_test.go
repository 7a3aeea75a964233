package cmdline

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// TestParseDeployment: the flags of a deployment, what a node runs, and the
// command lines that cannot form a group, refused in argparse's words.
func TestParseDeployment(t *testing.T) {
	for _, tc := range []struct {
		args      string
		nodeRanks []int
		gpus      int
		want      Deployment
	}{
		{"--tp-size 8", []int{0, 1, 2, 3, 4, 5, 6, 7}, 8, defaultDeployment()},
		{"--tp-size 16 --nnodes 2 --node-rank 1 --dist-init-addr 10.0.0.1:25000 --dist-timeout 60 --watchdog-timeout 5",
			[]int{8, 9, 10, 11, 12, 13, 14, 15}, 8,
			Deployment{NNodes: 2, NodeRank: 1, DistInitAddr: "10.0.0.1:25000", DistTimeout: time.Minute, WatchdogTimeout: 5 * time.Second,
				WatchdogGiven: true, Disagg: DisaggNull, BootstrapPort: DefaultBootstrapPort}},
		{"--tp 4 --disaggregation-mode prefill --disaggregation-bootstrap-port 9000 --disaggregation-transfer-backend nixl", []int{0, 1, 2, 3}, 4,
			Deployment{NNodes: 1, WatchdogTimeout: DefaultWatchdogTimeout, Disagg: DisaggPrefill, BootstrapPort: 9000}},
	} {
		c, err := ParseArgs(strings.Fields(tc.args), simtest.NoEnv)
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if c.Deploy != tc.want {
			t.Errorf("%s: deployment %+v, want %+v", tc.args, c.Deploy, tc.want)
		}
		if got := c.NodeRanks(); !slices.Equal(got, tc.nodeRanks) || c.Sim.GPUs != tc.gpus {
			t.Errorf("%s: node ranks %v on %d GPUs, want %v on %d", tc.args, got, c.Sim.GPUs, tc.nodeRanks, tc.gpus)
		}
	}
	for _, tc := range []struct{ args, msg string }{
		{"--nnodes 2 --node-rank 0 --tp-size 8", "argument --dist-init-addr/--nccl-init-addr: required with --nnodes 2"},
		{"--nnodes 2 --node-rank 2 --tp-size 8 --dist-init-addr 127.0.0.1:1", "argument --node-rank: 2 is not below --nnodes 2"},
		{"--nnodes 2 --tp-size 3 --dist-init-addr 127.0.0.1:1", "3 ranks do not split evenly over --nnodes 2"},
		{"--nnodes 2 --tp-size 8 --dist-init-addr node0", "argument --dist-init-addr/--nccl-init-addr: invalid value: 'node0' (HOST:PORT)"},
		{"--disaggregation-mode both", "argument --disaggregation-mode: invalid choice: 'both' (choose from 'null', 'prefill', 'decode')"},
		{"--watchdog-timeout soon", "argument --watchdog-timeout: invalid float value: 'soon'"},
		{"--dist-timeout 1.5", "argument --dist-timeout: invalid int value: '1.5'"},
	} {
		_, err := ParseArgs(strings.Fields(tc.args), simtest.NoEnv)
		var ae *ArgError
		if !errors.As(err, &ae) || !strings.Contains(ae.Msg, tc.msg) {
			t.Errorf("%s: error %v, want an argparse error with %q", tc.args, err, tc.msg)
		}
	}
}

// TestWatchdogRepr: the watchdog's line prints the timeout as Python does,
// the int default as an int and a given value as the float argparse read.
func TestWatchdogRepr(t *testing.T) {
	for args, want := range map[string]string{"": "300", "--watchdog-timeout 5": "5.0", "--watchdog-timeout 0.5": "0.5", "--watchdog-timeout 300": "300.0"} {
		c, err := ParseArgs(strings.Fields(args), simtest.NoEnv)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Deploy.WatchdogRepr(); got != want {
			t.Errorf("%q: %s, want %s", args, got, want)
		}
	}
}
