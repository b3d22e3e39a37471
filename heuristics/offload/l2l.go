package offload

import (
	"fmt"

	inst "github.com/memsched/memsched/instances/offload"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/periodic"
)

// L2L is the Layer-to-Layer baseline (Pudipeddi et al., 002 §2): only the running layer's
// weights are kept on the GPU, the next layer's are prefetched during the current operation,
// and weights leave right after use — deleted after F_i (the CPU copy is current), offloaded
// after B_i (the update must reach the CPU first). Consecutive operations of one layer (F_L B_L,
// and B_1 then the next period's F_1) keep the weights. w_1 starts the period on the GPU with a
// stale CPU copy, so it is uploaded during F_1 before being deleted.
//
// Operations run as soon as their weights are there; transfers as soon as their channel is
// free. The result is validated (memory included) before it is returned; an error means L2L
// does not fit in p.MGPU.
func L2L(p *inst.Problem) (*schedule.Periodic, periodic.Report, error) {
	L := p.L()
	s := &schedule.Periodic{OpStart: make([]float64, 2*L), Resident: make([]bool, L+1), CPUValid: make([]bool, L+1)}
	moves := func(i int) bool { return p.Layer(i).W > 0 } // zero-size weights stay put
	for i := 1; i <= L; i++ {
		s.Resident[i] = i == 1 || !moves(i)
		s.CPUValid[i] = i > 1 && moves(i)
	}
	dur := func(i int) float64 { return float64(p.Layer(i).W) / p.Beta }
	var prefFree, offFree float64 // channel availability
	ready := make([]float64, L+1) // when w_i is on the GPU
	gone := make([]float64, L+1)  // when w_i left the GPU (a prefetch may start only then)
	order := make([][2]int, 0, 2*L)
	for i := 1; i <= L; i++ {
		order = append(order, [2]int{i, 0})
	}
	for i := L; i >= 1; i-- {
		order = append(order, [2]int{i, 1})
	}
	t := 0.0
	end := 0.0
	for j, op := range order {
		i, back := op[0], op[1] == 1
		start := max(t, ready[i])
		s.OpStart[j] = start
		u := p.Layer(i).UF
		if back {
			u = p.Layer(i).UB
		}
		t = start + u
		// Prefetch the next operation's layer during this one.
		if j+1 < len(order) {
			ni := order[j+1][0]
			if ni != i && moves(ni) {
				ps := max(start, prefFree, gone[ni])
				s.Transfers = append(s.Transfers, schedule.Transfer{Layer: ni, Kind: schedule.Prefetch, Start: ps})
				prefFree = ps + dur(ni)
				ready[ni] = prefFree
			}
		}
		// Let the weights go after use unless the next operation uses them too.
		nextSame := j+1 < len(order) && order[j+1][0] == i || j+1 == len(order)
		switch {
		case nextSame || !moves(i):
		case !back && i == 1:
			us := max(0, offFree)
			s.Transfers = append(s.Transfers, schedule.Transfer{Layer: 1, Kind: schedule.Upload, Start: us})
			offFree = us + dur(1)
			gone[1] = max(t, offFree)
			s.Deletes = append(s.Deletes, schedule.Delete{Layer: 1, Time: gone[1]})
		case !back:
			gone[i] = t
			s.Deletes = append(s.Deletes, schedule.Delete{Layer: i, Time: t})
		default:
			os := max(t, offFree)
			s.Transfers = append(s.Transfers, schedule.Transfer{Layer: i, Kind: schedule.Offload, Start: os})
			offFree = os + dur(i)
			gone[i] = offFree
		}
		end = max(end, t, offFree, prefFree)
	}
	s.Period = end
	rep, err := periodic.Validate(p, s)
	if err != nil {
		return nil, periodic.Report{}, fmt.Errorf("offload: L2L does not fit: %w", err)
	}
	return s, rep, nil
}
