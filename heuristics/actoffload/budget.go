package actoffload

// searchBudget counts the nodes of a search and watches its stop channel (checked every 1024
// nodes, a select being too dear per node).
type searchBudget struct {
	nodes, max  int
	stop        <-chan struct{}
	stopped     bool // the node limit or the stop channel ended the search
	interrupted bool // the stop channel did
}

// spend counts one node and reports whether the search must end.
func (b *searchBudget) spend() bool {
	b.nodes++
	if b.nodes > b.max {
		b.stopped = true
		return true
	}
	if b.stop != nil && b.nodes&1023 == 0 {
		select {
		case <-b.stop:
			b.stopped, b.interrupted = true, true
			return true
		default:
		}
	}
	return false
}

// twinAway is the equal-size rule of Exact and EventSearch (docs/act-offload.md, "Order of
// transfers"): x_i's offload waits while some x_j, j > i, of the same size is offloaded and not
// yet prefetched (st[j] offloading, offDone or away).
func twinAway(x []int64, st []xstate, i int) bool {
	for j := i + 1; j < len(st)-1; j++ {
		if x[j] == x[i] {
			if s := st[j]; s == offloading || s == offDone || s == away {
				return true
			}
		}
	}
	return false
}
