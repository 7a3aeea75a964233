package campaign

import (
	"io/fs"
	"maps"
)

// memFiles is an in-memory file tree for the loader, keyed by clean path.
type memFiles map[string]string

func (m memFiles) read(p string) ([]byte, error) {
	if s, ok := m[p]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
}

// with returns a copy of m with files replaced (an empty value deletes).
func (m memFiles) with(over memFiles) memFiles {
	out := maps.Clone(m)
	for k, v := range over {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

const (
	cfgPath  = "c/configs/camp.yaml"
	basePath = "c/scenarios/base.yaml"
	specPath = "c/scenarios/spec.yaml"
)

// goodFiles is a small valid campaign: a baseline and a speculative child.
var goodFiles = memFiles{
	cfgPath: `campaign: t
host:
  ssh: gpu
sweep:
  concurrency: [1, 8]
  max_tokens: 50
baseline: base
scenarios: [base, spec]
`,
	basePath: `name: base
model: /m
args:
  tp: 2
  max-running-requests: 64
env:
  NCCL_PROTO: LL
`,
	specPath: `extends: base
args:
  speculative-algorithm: EAGLE3
  speculative-num-steps: 3
  speculative-eagle-topk: 1
  speculative-num-draft-tokens: 4
`,
}

// top is goodFiles with extra appended to the campaign file: keys at its
// top level.
func top(extra string) memFiles {
	return goodFiles.with(memFiles{cfgPath: goodFiles[cfgPath] + extra})
}
