package remote

import (
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/measure"
)

func TestParsePowerSMI(t *testing.T) {
	at := func(s string) int64 {
		tm, err := time.Parse("2006/01/02 15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixNano()
	}
	tests := []struct {
		name string
		out  string
		want []measure.PowerSample
		bad  int
	}{
		{"nounits, two GPUs", "2026/12/01 03:00:00.123, 0, 245.31, 87, 81920, 1980\n2026/12/01 03:00:00.123, 1, 61.20, 0, 2, 210\n",
			[]measure.PowerSample{{TimeNs: at("2026/12/01 03:00:00.123"), GPU: 0, PowerW: 245.31, UtilPct: 87, MemMiB: 81920, SMMHz: 1980},
				{TimeNs: at("2026/12/01 03:00:00.123"), GPU: 1, PowerW: 61.2, UtilPct: 0, MemMiB: 2, SMMHz: 210}}, 0},
		{"with header and units", "timestamp, index, power.draw [W], utilization.gpu [%], memory.used [MiB], clocks.current.sm [MHz]\n" +
			"2026/12/01 03:00:00.623, 0, 245.31 W, 87 %, 81920 MiB, 1980 MHz\n",
			[]measure.PowerSample{{TimeNs: at("2026/12/01 03:00:00.623"), GPU: 0, PowerW: 245.31, UtilPct: 87, MemMiB: 81920, SMMHz: 1980}}, 0},
		// Boards without a power sensor (some GeForce and Jetson parts) and
		// vGPU guests print these instead of a value.
		{"[N/A] and [Not Supported]", "2026/12/01 03:00:01.000, 0, [N/A], [Not Supported], 1234, [N/A]\n2026/12/01 03:00:01.000, 1, [Not Supported], 12, [N/A], 1500\n",
			[]measure.PowerSample{{TimeNs: at("2026/12/01 03:00:01.000"), GPU: 0, PowerW: -1, UtilPct: -1, MemMiB: 1234, SMMHz: -1},
				{TimeNs: at("2026/12/01 03:00:01.000"), GPU: 1, PowerW: -1, UtilPct: 12, MemMiB: -1, SMMHz: 1500}}, 0},
		{"a line cut by the stop", "2026/12/01 03:00:01.000, 0, 245.31, 87, 81920, 1980\n2026/12/01 03:00:01.500, 0, 24",
			[]measure.PowerSample{{TimeNs: at("2026/12/01 03:00:01.000"), GPU: 0, PowerW: 245.31, UtilPct: 87, MemMiB: 81920, SMMHz: 1980}}, 1},
		{"empty", "", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad, err := ParsePowerSMI([]byte(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if bad != tt.bad {
				t.Errorf("bad = %d, want %d", bad, tt.bad)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d samples %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("sample %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	if _, _, err := ParsePowerSMI([]byte("Failed to initialize NVML: Driver/library version mismatch\n")); err == nil ||
		!strings.Contains(err.Error(), "none of 1") {
		t.Errorf("an nvidia-smi that only failed: err = %v", err)
	}
}

func TestParsePowerDCGM(t *testing.T) {
	out := "1764558000.250000 #Entity   POWER       GPUTL  FBUSD        SMCLK\n" +
		"1764558000.250100 ID        W           %      MB           MHZ\n" +
		"1764558000.250200 GPU 0     245.300     87     81920        1980\n" +
		"1764558000.250300 GPU 1     N/A         N/A    2            210\n"
	got, bad, err := ParsePowerDCGM([]byte(out))
	if err != nil || bad != 0 {
		t.Fatalf("bad %d, err %v", bad, err)
	}
	want := []measure.PowerSample{
		{TimeNs: 1764558000250200000, GPU: 0, PowerW: 245.3, UtilPct: 87, MemMiB: 81920, SMMHz: 1980},
		{TimeNs: 1764558000250300000, GPU: 1, PowerW: -1, UtilPct: -1, MemMiB: 2, SMMHz: 210},
	}
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		// The epoch is a float: allow its rounding.
		if d := got[i].TimeNs - want[i].TimeNs; d > 1000 || d < -1000 {
			t.Errorf("sample %d time %d, want %d", i, got[i].TimeNs, want[i].TimeNs)
		}
		got[i].TimeNs = want[i].TimeNs
		if got[i] != want[i] {
			t.Errorf("sample %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
