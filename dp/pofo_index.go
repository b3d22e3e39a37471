package dp

// stateIndex maps a packed state key to its index in a level's slice: open addressing with
// linear probing, a power-of-two table at most half full. It replaces a Go map on the combined
// DP's hottest path (every created state that survives the bounds is looked up once).
type stateIndex struct {
	keys  []uint64 // key+1; 0 marks an empty slot
	vals  []int32
	n     int
	shift uint
}

func newStateIndex() *stateIndex {
	const bits = 10
	return &stateIndex{keys: make([]uint64, 1<<bits), vals: make([]int32, 1<<bits), shift: 64 - bits}
}

func (t *stateIndex) slot(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> t.shift }

// get returns the index stored for k, or (−1, false).
func (t *stateIndex) get(k uint64) (int32, bool) {
	k++
	mask := uint64(len(t.keys) - 1)
	for i := t.slot(k); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case k:
			return t.vals[i], true
		case 0:
			return -1, false
		}
	}
}

// put stores v for k, which must be absent.
func (t *stateIndex) put(k uint64, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	t.insert(k+1, v)
	t.n++
}

func (t *stateIndex) insert(k uint64, v int32) {
	mask := uint64(len(t.keys) - 1)
	i := t.slot(k)
	for t.keys[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.vals[i] = k, v
}

func (t *stateIndex) grow() {
	keys, vals := t.keys, t.vals
	t.keys, t.vals = make([]uint64, 2*len(keys)), make([]int32, 2*len(keys))
	t.shift--
	for i, k := range keys {
		if k != 0 {
			t.insert(k, vals[i])
		}
	}
}
