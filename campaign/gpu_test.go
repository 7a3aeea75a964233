package campaign

import (
	"reflect"
	"testing"
)

// TestGPUNone: `gpu: none` says the host has no GPU: the wait's settings
// are cleared, the power sampler is off, a sampler asked for by name is
// refused with its position, and the sweep fingerprint does not change.
func TestGPUNone(t *testing.T) {
	offByDefault := PowerOpts{Source: PowerOff, Interval: DefaultPowerInterval}
	for _, tc := range []struct {
		name      string
		files     memFiles
		wantGPU   GPUOpts
		wantPower PowerOpts
		wantErrs  []string
	}{
		{name: "a GPU host by default", files: goodFiles,
			wantGPU:   GPUOpts{MaxUsedMiB: DefaultMaxUsedMiB, WaitTimeout: DefaultGPUWaitTimeout},
			wantPower: PowerOpts{Source: DefaultPowerSource, Interval: DefaultPowerInterval}},
		{name: "none", files: top("gpu: none\n"), wantGPU: GPUOpts{None: true}, wantPower: offByDefault},
		{name: "none with power off", files: top("gpu: none\npower: {source: off}\n"), wantGPU: GPUOpts{None: true}, wantPower: offByDefault},
		{name: "none with nvidia-smi power", files: top("gpu: none\npower:\n  source: nvidia-smi\n"), wantErrs: []string{
			`c/configs/camp.yaml:11:11: power.source: nvidia-smi reads GPU power, and gpu: none (line 9) says the host has no GPU; leave power out or write source: off`,
		}},
		{name: "power before none", files: top("power: {source: dcgm, interval: 1s}\ngpu: none\n"), wantErrs: []string{
			`c/configs/camp.yaml:9:17: power.source: dcgm reads GPU power, and gpu: none (line 10) says the host has no GPU; leave power out or write source: off`,
			`c/configs/camp.yaml:9:33: power.interval: no power sampler runs on a host without a GPU (gpu: none, line 10)`,
		}},
		{name: "none beside the wait's keys", files: top("gpu: none\ngpu:\n  kill_strays: true\n"), wantErrs: []string{
			`c/configs/camp.yaml:10:1: campaign file: duplicate key "gpu" (first at line 9)`,
		}},
		{name: "a word other than none", files: top("gpu: no\n"), wantErrs: []string{
			`c/configs/camp.yaml:9:6: gpu: want none (the host has no GPU) or a mapping (gpu: {max_used_mib: 1024}), got "no"`,
		}},
		{name: "false", files: top("gpu: false\n"), wantErrs: []string{
			`c/configs/camp.yaml:9:6: gpu: want none (the host has no GPU) or a mapping (gpu: {max_used_mib: 1024}), got "false"`,
		}},
		{name: "none as a key of the mapping", files: top("gpu:\n  none: true\n"), wantErrs: []string{
			`c/configs/camp.yaml:10:3: gpu: unknown key "none" (known: kill_strays, max_used_mib, nvidia_smi, wait_timeout)`,
		}},
		{name: "a list", files: top("gpu: [none]\n"), wantErrs: []string{
			`c/configs/camp.yaml:9:6: gpu: want a mapping, got a list`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, tc.files)
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Fatalf("errors:\n got: %q\nwant: %q", errs, tc.wantErrs)
			}
			if c == nil {
				return
			}
			if c.GPU != tc.wantGPU || c.Power != tc.wantPower {
				t.Errorf("gpu %+v, power %+v; want %+v, %+v", c.GPU, c.Power, tc.wantGPU, tc.wantPower)
			}
		})
	}
	a, _ := loadMem(t, goodFiles)
	b, _ := loadMem(t, top("gpu: none\n"))
	if a == nil || b == nil || a.Fingerprint() != b.Fingerprint() {
		t.Errorf("gpu: none changed the sweep fingerprint: nothing measured differs")
	}
}
