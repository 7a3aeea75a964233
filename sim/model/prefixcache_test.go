package model

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/sim/cmdline"
	"github.com/bakeoff-dev/bakeoff/sim/internal/simtest"
)

// seq returns n token ids starting at from: from, from+1, …
func seq(from, n int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(from + i)
	}
	return ids
}

func cat(parts ...[]int32) []int32 {
	var out []int32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestPrefixCacheMatch: the longest cached prefix, in whole pages, never
// the whole prompt (its last token is always computed).
func TestPrefixCacheMatch(t *testing.T) {
	shared := seq(1000, 40)
	tests := []struct {
		name   string
		page   int
		cached [][]int32
		prompt []int32
		want   int
	}{
		{"empty cache", 1, nil, seq(1, 40), 0},
		{"a repeated prompt keeps its last token to compute", 1, [][]int32{seq(1, 40)}, seq(1, 40), 39},
		{"a repeated prompt in pages of 16", 16, [][]int32{seq(1, 40)}, seq(1, 40), 32},
		{"a longer cached sequence (prompt and output)", 1, [][]int32{seq(1, 100)}, seq(1, 40), 39},
		{"a partial prefix", 1, [][]int32{cat(shared, seq(1, 10))}, cat(shared, seq(500, 10)), 40},
		{"a partial prefix in pages", 16, [][]int32{cat(shared, seq(1, 10))}, cat(shared, seq(500, 10)), 32},
		{"a prefix shorter than a page", 16, [][]int32{cat(seq(7, 5), seq(1, 40))}, cat(seq(7, 5), seq(500, 40)), 0},
		{"the longest of two branches", 1, [][]int32{cat(shared, seq(1, 5)), cat(shared, seq(500, 20))}, cat(shared, seq(500, 30)), 60},
		{"no common first token", 1, [][]int32{seq(1, 40)}, seq(2, 40), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewPrefixCache(1_000_000, tt.page)
			for _, s := range tt.cached {
				c.Insert(s)
			}
			if got, _ := c.Match(tt.prompt, len(tt.prompt)-1); got != tt.want {
				t.Errorf("matched %d tokens, want %d", got, tt.want)
			}
		})
	}
}

// TestPrefixCacheEviction: at capacity the least recently used sequence
// goes first, a sequence a running request holds never goes, and the size
// never exceeds the capacity.
func TestPrefixCacheEviction(t *testing.T) {
	a, b, c := seq(1, 40), seq(100, 40), seq(200, 40)
	tests := []struct {
		name string
		run  func(cache *PrefixCache)
		hit  map[string]bool // which of a, b, c are still cached
	}{
		{"the oldest goes", func(cache *PrefixCache) {
			cache.Insert(a)
			cache.Insert(b)
			cache.Insert(c)
		}, map[string]bool{"a": false, "b": true, "c": true}},
		{"a recent match keeps a sequence", func(cache *PrefixCache) {
			cache.Insert(a)
			cache.Insert(b)
			cache.Match(a, 39)
			cache.Insert(c)
		}, map[string]bool{"a": true, "b": false, "c": true}},
		{"a held sequence stays", func(cache *PrefixCache) {
			cache.hold(cache.Insert(a))
			cache.Insert(b)
			cache.Insert(c)
		}, map[string]bool{"a": true, "b": false, "c": true}},
		{"released, it goes again", func(cache *PrefixCache) {
			n := cache.Insert(a)
			cache.hold(n)
			cache.Insert(b)
			cache.release(n)
			cache.Insert(c)
		}, map[string]bool{"a": false, "b": true, "c": true}},
		{"what does not fit is cut", func(cache *PrefixCache) {
			cache.hold(cache.Insert(a))
			cache.hold(cache.Insert(b))
			cache.Insert(c)
		}, map[string]bool{"a": true, "b": true, "c": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := NewPrefixCache(100, 1)
			tt.run(cache)
			if cache.Size() > 100 {
				t.Errorf("size %d above the capacity 100", cache.Size())
			}
			for name, ids := range map[string][]int32{"a": a, "b": b, "c": c} {
				n, _ := cache.Match(ids, 39)
				if got := n == 39; got != tt.hit[name] {
					t.Errorf("%s: matched %d of 39, want cached %v", name, n, tt.hit[name])
				}
			}
		})
	}
}

// TestPrefixCacheSizeAccounting: many random sequences sharing prefixes,
// inserted, held and released at random, keep the size equal to the
// tokens in the tree and within the capacity.
func TestPrefixCacheSizeAccounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cache := NewPrefixCache(2000, 1)
	var held []*radixNode
	for range 2000 {
		s := cat(seq(rng.IntN(4)*1000, rng.IntN(60)), seq(10_000+rng.IntN(50)*100, 1+rng.IntN(80)))
		n := cache.Insert(s)
		if rng.IntN(3) == 0 {
			cache.hold(n)
			held = append(held, n)
		}
		if len(held) > 5 {
			cache.release(held[0])
			held = held[1:]
		}
		if cache.Size() > 2000 {
			t.Fatalf("size %d above the capacity", cache.Size())
		}
	}
	var count func(n *radixNode) int
	count = func(n *radixNode) int {
		s := len(n.key)
		for _, ch := range n.children {
			s += count(ch)
		}
		return s
	}
	if got := count(cache.root); got != cache.Size() {
		t.Errorf("the tree holds %d tokens, Size says %d", got, cache.Size())
	}
}

// TestSchedulerPrefixCache: in the scheduler, a repeated long prompt's
// prefill costs only its fixed part and one token, a flush brings the full
// cost back, and a disabled cache never spares anything.
func TestSchedulerPrefixCache(t *testing.T) {
	cfg := simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", "0")
	perf := NewPerf(cfg)
	prompt := TokenizeText(string(make([]byte, 4*4000))) // 4000 tokens
	// prefill runs one request of the prompt to its end and returns the
	// simulated time of its prefill step and the tokens the cache spared.
	prefill := func(s *Scheduler) (time.Duration, int) {
		j := &Job{PromptTokens: len(prompt), Target: 3, Prompt: prompt}
		s.Add(j)
		r := s.Step()
		for !s.Idle() {
			s.Step()
		}
		return r.Duration, r.CachedTokens
	}
	full, fixed := perf.PrefillStep(len(prompt)), perf.PrefillStep(1)
	cached := NewScheduler(perf, 8, 8192, rand.New(rand.NewPCG(1, 1)))
	cached.UseCache(NewPrefixCache(cmdline.KVCacheTokens, 1))
	off := NewScheduler(perf, 8, 8192, rand.New(rand.NewPCG(1, 1)))
	steps := []struct {
		name   string
		s      *Scheduler
		flush  bool
		want   time.Duration
		spared int
	}{
		{"first sight", cached, false, full, 0},
		{"repeated", cached, false, fixed, len(prompt) - 1},
		{"repeated again", cached, false, fixed, len(prompt) - 1},
		{"after a flush", cached, true, full, 0},
		{"repeated after the flush", cached, false, fixed, len(prompt) - 1},
		{"cache off", off, false, full, 0},
		{"cache off, repeated", off, false, full, 0},
	}
	for _, st := range steps {
		if st.flush {
			st.s.FlushCache()
		}
		d, spared := prefill(st.s)
		if d != st.want || spared != st.spared {
			t.Errorf("%s: prefill %v sparing %d tokens, want %v sparing %d", st.name, d, spared, st.want, st.spared)
		}
	}
	if full < 10*fixed {
		t.Errorf("a 4000-token prefill (%v) should cost far more than a cached one (%v)", full, fixed)
	}
}

// TestSchedulerCacheSameBatch: two requests with one prompt prefilled in
// the same batch both compute it (matching comes before caching), and a
// third, later, finds it.
func TestSchedulerCacheSameBatch(t *testing.T) {
	cfg := simtest.Config(t, cmdline.ParseArgs, "baseline", "--sim-noise", "0")
	s := NewScheduler(NewPerf(cfg), 8, 8192, rand.New(rand.NewPCG(1, 1)))
	s.UseCache(NewPrefixCache(cmdline.KVCacheTokens, 1))
	p := seq(1, 100)
	a, b := &Job{PromptTokens: 100, Target: 5, Prompt: p}, &Job{PromptTokens: 100, Target: 5, Prompt: p}
	s.Add(a)
	s.Add(b)
	if r := s.Step(); r.Batch != 2 || r.CachedTokens != 0 {
		t.Fatalf("batch %d with %d cached tokens, want both computed", r.Batch, r.CachedTokens)
	}
	c := &Job{PromptTokens: 100, Target: 5, Prompt: p}
	s.Add(c)
	for !s.Idle() {
		s.Step()
	}
	if c.Cached != 99 {
		t.Errorf("the later request found %d cached tokens, want 99", c.Cached)
	}
}
