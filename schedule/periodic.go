package schedule

import "fmt"

// TransferKind is a weight transfer on the GPU–CPU link (002 §3).
type TransferKind uint8

const (
	// Offload sends w_i to the CPU and deletes it from the GPU when the transfer ends
	// (its buffer stays reserved until then).
	Offload TransferKind = iota
	// Upload sends w_i to the CPU and keeps it on the GPU.
	Upload
	// Prefetch brings w_i back; its buffer is reserved from the start.
	Prefetch
)

// MarshalText writes the kind's name in JSON.
func (k TransferKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name, so that a schedule printed as JSON reads back.
func (k *TransferKind) UnmarshalText(b []byte) error {
	for _, c := range []TransferKind{Offload, Upload, Prefetch} {
		if string(b) == c.String() {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("schedule: unknown transfer kind %q (want offload, upload or prefetch)", b)
}

func (k TransferKind) String() string {
	switch k {
	case Offload:
		return "offload"
	case Upload:
		return "upload"
	case Prefetch:
		return "prefetch"
	}
	return "TransferKind(?)"
}

// Transfer moves the weights of one layer (1-based) starting at Start seconds; it lasts
// |w_i| / β. Offload and Upload use the GPU→CPU channel, Prefetch the CPU→GPU one (full duplex).
type Transfer struct {
	Layer int          `json:"layer"`
	Kind  TransferKind `json:"kind"`
	Start float64      `json:"start"`
}

// Delete drops w_Layer from the GPU at Time (a valid copy must be on the CPU).
type Delete struct {
	Layer int     `json:"layer"`
	Time  float64 `json:"time"`
}

// PeriodicOp returns the layer (1-based) and direction of operation j of a Periodic with L
// layers: F_{j+1} for j < L, B_{2L−j} for j ≥ L.
func PeriodicOp(L, j int) (layer int, backward bool) {
	if j < L {
		return j + 1, false
	}
	return 2*L - j, true
}

// PeriodicIndex is the inverse of PeriodicOp: the index of F_i or B_i.
func PeriodicIndex(L, i int, backward bool) int {
	if backward {
		return 2*L - i
	}
	return i - 1
}

// Periodic is one period [0, Period] of a steady-state training schedule with weight
// offloading (002): the 2L operations in the cyclic order F_1 … F_L, B_L … B_1 with their start
// times, and the transfers and deletions. Resident and CPUValid (indexed by layer, 1..L; index
// 0 unused) give the state at time 0, which the state at time Period must equal.
type Periodic struct {
	Period float64 `json:"period"`
	// OpStart[j] is the start of operation j: F_{j+1} for j < L, B_{2L−j} for j ≥ L.
	OpStart   []float64  `json:"op_start"`
	Transfers []Transfer `json:"transfers"`
	Deletes   []Delete   `json:"deletes"`
	// Resident[i]: w_i is on the GPU at time 0. CPUValid[i]: the CPU holds the current w_i.
	Resident []bool `json:"resident"`
	CPUValid []bool `json:"cpu_valid"`
}
