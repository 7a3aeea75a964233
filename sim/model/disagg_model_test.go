package model

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// TestDisaggTradeOff: the direction of the trade-off the published
// measurements report (docs/SIM.md, Disaggregation). Under load with long
// prompts, every prefill of the aggregated server stalls its running
// decodes, which the decode worker never sees: disaggregation wins the
// inter-token tail by a wide margin and loses the first token (a prefill on
// half the GPUs, the transfer, the prefill worker's queue). With one stream
// nothing interrupts the aggregated decode, and disaggregation loses both.
func TestDisaggTradeOff(t *testing.T) {
	agg, pre, dec := simtest.DisaggSetups(t, cmdline.ParseArgs)
	for _, tc := range []struct {
		name string
		load LatencyLoad
		// pdITLWins asks for the disaggregated ITL p99 to be below the
		// aggregated one divided by this factor; 0 asks for it to be above.
		pdITLWins float64
	}{
		{"long prompts under load", LatencyLoad{Concurrency: 16, Requests: 160, PromptTokens: 4000, OutputTokens: 200, Seed: 1}, 3},
		{"long prompts, one stream", LatencyLoad{Concurrency: 1, Requests: 20, PromptTokens: 4000, OutputTokens: 200, Seed: 1}, 0},
		{"short prompts, one stream", LatencyLoad{Concurrency: 1, Requests: 20, PromptTokens: 128, OutputTokens: 200, Seed: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, d := RunVirtualLatency(agg, tc.load), RunVirtualDisagg(pre, dec, tc.load)
			if len(a.TTFT) != tc.load.Requests || len(d.TTFT) != tc.load.Requests {
				t.Fatalf("answered %d and %d requests, want %d each", len(a.TTFT), len(d.TTFT), tc.load.Requests)
			}
			aITL, dITL := Quantile(a.ITL, 0.99), Quantile(d.ITL, 0.99)
			if tc.pdITLWins > 0 && float64(dITL)*tc.pdITLWins > float64(aITL) {
				t.Errorf("ITL p99: disaggregated %v, aggregated %v: want disaggregation %g× better", dITL, aITL, tc.pdITLWins)
			}
			if tc.pdITLWins == 0 && dITL <= aITL {
				t.Errorf("ITL p99: disaggregated %v, aggregated %v: nothing interrupts one stream, disaggregation should not win", dITL, aITL)
			}
			if aT, dT := Quantile(a.TTFT, 0.5), Quantile(d.TTFT, 0.5); dT <= aT {
				t.Errorf("TTFT p50: disaggregated %v, aggregated %v: want disaggregation later", dT, aT)
			}
		})
	}
}

// TestKVTransferTime: the transfer's size and speed as the model states
// them: 68.6 KiB a token, 40 GB/s, 5 ms to begin.
func TestKVTransferTime(t *testing.T) {
	if kvBytesPerToken != 70272 {
		t.Errorf("KV per token %d bytes, want 70272 (61 layers × 576 values × 2 bytes)", kvBytesPerToken)
	}
	for tokens, want := range map[int]time.Duration{0: 5 * time.Millisecond, 4000: 12027200 * time.Nanosecond} {
		if got := KVTransferTime(tokens); got != want {
			t.Errorf("transfer of %d tokens: %v, want %v", tokens, got, want)
		}
	}
}

// TestDisaggTable prints docs/SIM.md's table of the trade-off when
// BAKEOFF_SIM_DISAGG_TABLE is set.
func TestDisaggTable(t *testing.T) {
	if os.Getenv("BAKEOFF_SIM_DISAGG_TABLE") == "" {
		t.Skip("set BAKEOFF_SIM_DISAGG_TABLE=1 to print the table")
	}
	agg, pre, dec := simtest.DisaggSetups(t, cmdline.ParseArgs)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f", d.Seconds()*1000) }
	fmt.Println("| prompt | C | TTFT p50 agg / PD (ms) | ITL p50 agg / PD (ms) | ITL p99 agg / PD (ms) | tok/s agg / PD |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, p := range []int{128, 1000, 4000} {
		for _, c := range []int{1, 16, 64} {
			l := LatencyLoad{Concurrency: c, Requests: max(40, 10*c), PromptTokens: p, OutputTokens: 200, Seed: 1}
			a, d := RunVirtualLatency(agg, l), RunVirtualDisagg(pre, dec, l)
			fmt.Printf("| %d | %d | %s / %s | %s / %s | %s / %s | %.0f / %.0f |\n", p, c,
				ms(Quantile(a.TTFT, 0.5)), ms(Quantile(d.TTFT, 0.5)), ms(Quantile(a.ITL, 0.5)), ms(Quantile(d.ITL, 0.5)),
				ms(Quantile(a.ITL, 0.99)), ms(Quantile(d.ITL, 0.99)), a.Throughput, d.Throughput)
		}
	}
}
