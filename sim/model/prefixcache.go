package model

import "container/heap"

// PrefixCache is SGLang's radix cache in miniature (mem_cache/radix_cache.py):
// a radix tree of the token ids the server has prefilled or generated, so
// that a request whose prompt begins with cached tokens skips their prefill.
// Matches count whole pages of page tokens (SGLang's --page-size). The tree
// holds at most capacity tokens; when an insert needs room, the least
// recently used leaves that no running request holds are evicted first, as
// SGLang evicts. It is pure and not safe for concurrent use: the Scheduler
// that owns it runs under the engine's lock.
type PrefixCache struct {
	root     *radixNode
	capacity int
	page     int
	size     int    // tokens in the tree
	clock    uint64 // logical time of the last access, for LRU
}

// radixNode is one edge of the tree: key is the run of tokens from its
// parent to it; lock counts the running requests that hold it or a node
// below it (a held node is never evicted).
type radixNode struct {
	key      []int32
	parent   *radixNode
	children map[int32]*radixNode
	lock     int
	used     uint64
}

// NewPrefixCache returns an empty cache of capacity tokens that matches in
// pages of page tokens (at least 1).
func NewPrefixCache(capacity, page int) *PrefixCache {
	return &PrefixCache{root: newRadixNode(nil, nil), capacity: max(0, capacity), page: max(1, page)}
}

func newRadixNode(parent *radixNode, key []int32) *radixNode {
	return &radixNode{key: key, parent: parent, children: map[int32]*radixNode{}}
}

// Size is the number of tokens the cache holds.
func (c *PrefixCache) Size() int { return c.size }

// Reset empties the cache (POST /flush_cache). Nodes held by requests still
// running are dropped with the tree; their release is then a no-op.
func (c *PrefixCache) Reset() {
	c.root = newRadixNode(nil, nil)
	c.size = 0
}

// descend walks ids down the tree as far as they match, splitting the last
// node when the match ends inside it, and returns the node reached and the
// number of tokens matched. Every node on the way counts as used now.
func (c *PrefixCache) descend(ids []int32) (*radixNode, int) {
	c.clock++
	n, i := c.root, 0
	for i < len(ids) {
		ch := n.children[ids[i]]
		if ch == nil {
			break
		}
		k := 0
		for k < len(ch.key) && i+k < len(ids) && ch.key[k] == ids[i+k] {
			k++
		}
		if k < len(ch.key) {
			ch = c.split(ch, k)
		}
		ch.used = c.clock
		n, i = ch, i+k
	}
	return n, i
}

// split cuts n after its first k tokens and returns the new upper node,
// which inherits n's holders (whoever holds n holds its ancestors).
func (c *PrefixCache) split(n *radixNode, k int) *radixNode {
	up := newRadixNode(n.parent, n.key[:k:k])
	up.lock, up.used = n.lock, n.used
	n.parent.children[n.key[0]] = up
	n.key = n.key[k:]
	n.parent = up
	up.children[n.key[0]] = n
	return up
}

// Match returns how many leading tokens of ids the cache holds, in whole
// pages and at most limit (SGLang leaves at least the last prompt token to
// compute, so a prompt's limit is its length less one), and the node where
// that prefix ends.
func (c *PrefixCache) Match(ids []int32, limit int) (int, *radixNode) {
	limit = max(0, min(limit, len(ids)))
	_, n := c.descend(ids[:limit])
	n -= n % c.page
	node, _ := c.descend(ids[:n])
	return n, node
}

// Insert adds ids to the tree, evicting what it must to stay within the
// capacity, and returns the node where the inserted sequence ends: short of
// its end when even eviction leaves no room for all of it.
func (c *PrefixCache) Insert(ids []int32) *radixNode {
	node, m := c.descend(ids)
	need := len(ids) - m
	if need == 0 {
		return node
	}
	if over := c.size + need - c.capacity; over > 0 {
		c.hold(node) // the node the new tokens hang from must survive
		c.evict(over)
		c.release(node)
	}
	need = min(need, c.capacity-c.size)
	if need <= 0 {
		return node
	}
	leaf := newRadixNode(node, append([]int32(nil), ids[m:m+need]...))
	leaf.used = c.clock
	node.children[leaf.key[0]] = leaf
	c.size += need
	return leaf
}

// hold marks n and its ancestors as in use by a running request.
func (c *PrefixCache) hold(n *radixNode) {
	for ; n != nil && n.parent != nil; n = n.parent {
		n.lock++
	}
}

// release undoes one hold.
func (c *PrefixCache) release(n *radixNode) {
	for ; n != nil && n.parent != nil; n = n.parent {
		n.lock--
	}
}

// evict removes at least need tokens from least recently used unheld leaves
// (a parent whose last child went becomes a leaf in turn), or all it can.
func (c *PrefixCache) evict(need int) {
	var leaves lruHeap
	var walk func(n *radixNode)
	walk = func(n *radixNode) {
		for _, ch := range n.children {
			walk(ch)
		}
		if n.parent != nil && len(n.children) == 0 && n.lock == 0 {
			leaves = append(leaves, n)
		}
	}
	walk(c.root)
	heap.Init(&leaves)
	for freed := 0; freed < need && leaves.Len() > 0; {
		n := heap.Pop(&leaves).(*radixNode)
		p := n.parent
		delete(p.children, n.key[0])
		c.size -= len(n.key)
		freed += len(n.key)
		if p.parent != nil && len(p.children) == 0 && p.lock == 0 {
			heap.Push(&leaves, p)
		}
	}
}

// lruHeap orders leaves by last use, oldest first.
type lruHeap []*radixNode

func (h lruHeap) Len() int           { return len(h) }
func (h lruHeap) Less(i, j int) bool { return h[i].used < h[j].used }
func (h lruHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lruHeap) Push(x any)        { *h = append(*h, x.(*radixNode)) }
func (h *lruHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}
