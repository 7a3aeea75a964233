package campaign

import (
	"errors"
	"testing"
)

// FuzzLoad feeds arbitrary campaign and scenario files to the loader: it
// must never panic, must return either a campaign or *Errors, and every
// loaded campaign must render.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(goodFiles[cfgPath]), []byte(goodFiles[specPath]))
	f.Add([]byte("campaign: x\nhost: local\nsweep: {concurrency: [1]}\nscenarios: [spec]\n"), []byte("model: m\nlaunch: [\"{bakeoff}\", \"{model}\"]\nengine: generic\n"))
	f.Add([]byte("a: &x [1, *x]\n"), []byte("extends: spec\n"))
	f.Add([]byte("campaign: t\nhost: {ssh: \"[::1]:22\"}\nsweep:\n  concurrency: [1, 1, -1, 0x10]\n  requests: auto\nscenarios: [spec, spec]\n"), []byte("args: {\"--a\": [1, null], b: ~}\nenv: {X: null}\n"))
	f.Add([]byte("---\n---\n"), []byte("\x00\xff"))
	f.Add([]byte("host:\n\t- x\n"), []byte("<<: *a\n"))
	f.Fuzz(func(t *testing.T, cfg, spec []byte) {
		files := goodFiles.with(memFiles{cfgPath: string(cfg), specPath: string(spec)})
		c, err := load(cfgPath, files.read)
		if err != nil {
			var errs *Errors
			if !errors.As(err, &errs) || len(errs.List) == 0 {
				t.Fatalf("error %T without problems: %v", err, err)
			}
			return
		}
		for _, s := range c.Scenarios {
			if _, err := Render(c, s, On{Bakeoff: "/bin/bakeoff"}); err != nil {
				t.Fatalf("a loaded scenario does not render: %v", err)
			}
		}
		_ = c.Fingerprint()
	})
}
