package campaign

import "testing"

// TestPrefixCache: the campaign's engine.prefix_cache is every scenario's
// word on its server's prefix cache, a scenario's own prefix_cache wins,
// and a child inherits its parent's.
func TestPrefixCache(t *testing.T) {
	for _, tc := range []struct {
		name             string
		files            memFiles
		wantBase, wantSp string
		wantCampaign     string
	}{
		{"none said", nil, "", "", ""},
		{"campaign-wide none", memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  prefix_cache: none\n"}, "", "", "none"},
		{"a reset on one side only", memFiles{specPath: goodFiles[specPath] + "prefix_cache: {reset: \"POST /slots/0?action=erase\"}\n"},
			"", "reset: POST /slots/0?action=erase", ""},
		{"inherited from the parent", memFiles{basePath: goodFiles[basePath] + "prefix_cache:\n  reset_command: ./flush.sh\n"},
			"reset_command: ./flush.sh", "reset_command: ./flush.sh", ""},
		{"the child's own wins", memFiles{basePath: goodFiles[basePath] + "prefix_cache: none\n", specPath: goodFiles[specPath] + "prefix_cache: {reset: /flush_cache}\n"},
			"none", "reset: /flush_cache", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := loadMem(t, goodFiles.with(tc.files))
			if errs != nil {
				t.Fatal(errs)
			}
			if got := c.Engine.PrefixCache.String(); got != tc.wantCampaign {
				t.Errorf("engine.prefix_cache %q, want %q", got, tc.wantCampaign)
			}
			for i, want := range []string{tc.wantBase, tc.wantSp} {
				if got := c.Scenarios[i].PrefixCache.String(); got != want {
					t.Errorf("%s: prefix_cache %q, want %q", c.Scenarios[i].Name, got, want)
				}
			}
		})
	}
}

// TestAcknowledge: engine.acknowledge takes the findings the preflight can
// be told to let pass, and names them when given another.
func TestAcknowledge(t *testing.T) {
	c, errs := loadMem(t, goodFiles.with(memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  acknowledge: [fusion-on-gpu]\n"}))
	if errs != nil || len(c.Engine.Acknowledge) != 1 || c.Engine.Acknowledge[0] != AckFusionOnGPU {
		t.Fatalf("%v %+v", errs, c)
	}
	_, errs = loadMem(t, goodFiles.with(memFiles{cfgPath: goodFiles[cfgPath] + "engine:\n  acknowledge: [fusion]\n"}))
	want := `c/configs/camp.yaml:10:17: engine.acknowledge: "fusion" is nothing to acknowledge (fusion-on-gpu)`
	if len(errs) != 1 || errs[0] != want {
		t.Errorf("errors %q, want %q", errs, want)
	}
}
