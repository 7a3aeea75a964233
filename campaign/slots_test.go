package campaign

import (
	"reflect"
	"strings"
	"testing"
)

// slotFiles is a TP 2 comparison for launches side by side: two
// deployments of one role on two GPUs each.
var slotFiles = memFiles{
	cfgPath: `campaign: t
host: local
launches_per_host: 4
sweep:
  concurrency: [1, 8]
baseline: a
scenarios: [a, b]
`,
	"c/scenarios/a.yaml": `name: a
model: /m
args: {tp-size: 2}
deployment:
  roles:
    server: {gpus: 2}
`,
	"c/scenarios/b.yaml": `name: b
extends: a
args: {enable-torch-compile: true}
`,
}

func TestSlots(t *testing.T) {
	c, errs := loadMem(t, slotFiles)
	if errs != nil {
		t.Fatalf("load: %v", errs)
	}
	if c.LaunchesPerHost != 4 || c.SlotGPUs() != 2 {
		t.Fatalf("launches per host %d, slot GPUs %d; want 4 and 2", c.LaunchesPerHost, c.SlotGPUs())
	}
	var got []string
	for k := range 4 {
		sl := c.SlotOf(k)
		in := c.Scenarios[1].Deployment.Instances(c.Engine.Port, sl)[0]
		l, err := RenderInstance(c, c.Scenarios[1], []Instance{in}, 0, sl, On{}, LocalAddresses)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Command[:strings.Index(l.Command, " python3")]+" port "+strings.Fields(l.Command[strings.Index(l.Command, "--port"):])[1])
	}
	want := []string{
		"env -- CUDA_VISIBLE_DEVICES=0,1 port 30000",
		"env -- CUDA_VISIBLE_DEVICES=2,3 port 30100",
		"env -- CUDA_VISIBLE_DEVICES=4,5 port 30200",
		"env -- CUDA_VISIBLE_DEVICES=6,7 port 30300",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlotErrors(t *testing.T) {
	tests := []struct {
		name  string
		files memFiles
		want  []string
	}{
		{"a scenario of one server", slotFiles.with(memFiles{"c/scenarios/b.yaml": "name: b\nmodel: /m\nargs: {tp-size: 2}\n"}),
			[]string{`c/configs/camp.yaml:3:20: launches_per_host: 4 launches share each host, so each must say which GPUs it uses, and scenario b is one server without them: write it as a deployment of one role with gpus: (deployment: {roles: {server: {gpus: N}}})`}},
		{"a role without gpus", slotFiles.with(memFiles{"c/scenarios/b.yaml": "name: b\nextends: a\ndeployment:\n  roles:\n    router: {launch: [r]}\n  serve: router\n"}),
			[]string{`c/scenarios/b.yaml:5:5: deployment.roles.router: launches_per_host is 4 (c/configs/camp.yaml:3:20), so each role says which GPUs it uses: give it gpus:`}},
		{"zero", slotFiles.with(memFiles{cfgPath: strings.Replace(slotFiles[cfgPath], "launches_per_host: 4", "launches_per_host: 0", 1)}),
			[]string{`c/configs/camp.yaml:3:20: launches_per_host: must be at least 1, got 0`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadMem(t, tt.files)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
