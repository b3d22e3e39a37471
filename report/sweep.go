package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/offload"
	leveract "github.com/memsched/memsched/lever/actoffload"
	leverremat "github.com/memsched/memsched/lever/remat"
	"github.com/memsched/memsched/lever/weightoffload"
	"github.com/memsched/memsched/verify"
	"github.com/memsched/memsched/verify/oracle"
)

// SweepOptions describe a sweep over budgets.
type SweepOptions struct {
	// Input gives the chain, bandwidth, slots and solver; its Budget is ignored.
	Input Input
	// Budgets are the budgets to evaluate, in bytes (see Budgets).
	Budgets []int64
	// Levers to sweep (names of LeverNames); empty: every lever that applies.
	Levers []string
	// Workers run independent work in parallel (0: GOMAXPROCS).
	Workers int
	// OnPoint, when non-nil, is called (serially) with each point as soon as it is complete,
	// so that a caller can write rows out before the sweep ends.
	OnPoint func(Point)
}

// Budgets returns n budgets equally spaced from lo to hi inclusive (lo alone when n = 1).
func Budgets(lo, hi int64, n int) []int64 {
	if n < 1 || lo > hi {
		panic("report: Budgets needs n ≥ 1 and lo ≤ hi")
	}
	out := make([]int64, n)
	for k := range out {
		out[k] = lo
		if n > 1 {
			out[k] = lo + int64(float64(hi-lo)*float64(k)/float64(n-1))
		}
	}
	return out
}

// Point is one lever at one budget: every strategy's makespan (or period) and the best bound.
type Point struct {
	Lever  string `json:"lever"`
	Budget int64  `json:"budget"`
	// Rows hold the strategies in report order (Ratio to BestBound filled).
	Rows []Row `json:"strategies"`
	// BestBound is the best certified lower bound (0 with Infeasible or when none).
	BestBound   float64 `json:"best_bound,omitempty"`
	BestBoundBy string  `json:"best_bound_by,omitempty"`
	Infeasible  bool    `json:"infeasible,omitempty"`
}

// SweepResult is a whole sweep.
type SweepResult struct {
	Chain   string  `json:"chain"`
	Stages  int     `json:"stages"`
	Budgets []int64 `json:"budgets"`
	Points  []Point `json:"points"`
	// Frontiers are the exact makespan-versus-budget steps of the dynamic programs, read from
	// one table each (dp's Frontier methods), keyed by strategy.
	Frontiers map[string][]dp.Point `json:"frontiers,omitempty"`
	// Skipped and Notes say which levers did not run and which bounds were out of reach.
	Skipped map[string]string `json:"skipped,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
	// Interrupted: the context ended before every point was done; Points holds those done.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Sweep evaluates every strategy and the best bound of every lever at each budget. Each
// dynamic program builds ONE table at the largest budget and reads every smaller budget from
// it (a table at budget M answers every budget ≤ M, with M's slot size); independent work
// (tables, per-budget bounds and heuristics) runs on Workers goroutines. When ctx ends, Sweep
// returns the points completed so far with Interrupted set, and ctx's error.
func Sweep(ctx context.Context, o SweepOptions) (*SweepResult, error) {
	in := o.Input
	if in.Chain == nil || len(o.Budgets) == 0 {
		panic("report: Sweep needs a chain and budgets")
	}
	res := &SweepResult{Chain: in.Source, Stages: in.Chain.Len(), Budgets: o.Budgets,
		Frontiers: map[string][]dp.Point{}, Skipped: map[string]string{}}
	if w := chainWeights(in.Chain); w > 0 {
		if in.WeightsResident {
			res.Notes = append(res.Notes, fmt.Sprintf("remat, act-offload: each budget minus the chain's %s of resident weights", instances.FormatSize(w)))
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("remat, act-offload: budgets for activations only; the chain's %s of weights are not in them (--weights-resident to subtract them)", instances.FormatSize(w)))
		}
	}
	levers := o.Levers
	if len(levers) == 0 {
		levers = LeverNames
	}
	workers := o.Workers
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	s := &sweeper{o: o, res: res, sem: make(chan struct{}, workers)}
	if in.Progress != nil {
		total := 0
		for _, name := range levers {
			switch {
			case name == "remat" && floatingOutOfReach(in.Chain.Len(), max(in.Slots, 1), memoryLimit(in)/3) != "":
				total += len(o.Budgets) + 2 // persistent and revolve tables
			case name == "remat":
				total += len(o.Budgets) + 3
			case name == "weight-offload" && (WeightOffload{}).Skip(in) == "",
				name == "act-offload" && (ActOffload{}).Skip(in) == "",
				name == "remat-offload" && (RematOffload{}).Skip(in) == "":
				total += len(o.Budgets)
			}
		}
		in.Progress.Step(fmt.Sprintf("sweep: %d budgets", len(o.Budgets)), total)
		defer in.Progress.Done()
	}
	for _, name := range levers {
		switch name {
		case "remat":
			s.remat(ctx)
		case "weight-offload":
			if why := (WeightOffload{}).Skip(in); why != "" {
				res.Skipped[name] = why
				continue
			}
			s.weights(ctx)
		case "act-offload":
			if why := (ActOffload{}).Skip(in); why != "" {
				res.Skipped[name] = why
				continue
			}
			s.acts(ctx)
		case "remat-offload":
			if why := (RematOffload{}).Skip(in); why != "" {
				res.Skipped[name] = why
				continue
			}
			s.combined(ctx)
		default:
			panic("report: unknown lever " + name)
		}
	}
	s.wg.Wait()
	sort.Slice(res.Points, func(i, j int) bool {
		a, b := res.Points[i], res.Points[j]
		if a.Lever != b.Lever {
			return a.Lever < b.Lever
		}
		return a.Budget < b.Budget
	})
	if s.err != nil {
		return res, s.err
	}
	if err := ctx.Err(); err != nil {
		res.Interrupted = true
		return res, err
	}
	return res, nil
}

// sweeper runs jobs on a bounded pool and collects points.
type sweeper struct {
	o   SweepOptions
	res *SweepResult
	sem chan struct{}
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

// spawn runs f on the pool unless ctx has ended.
func (s *sweeper) spawn(ctx context.Context, f func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-s.sem }()
		if ctx.Err() != nil {
			return
		}
		if err := f(); err != nil && !(errors.Is(err, dp.ErrStopped) && ctx.Err() != nil) {
			s.fail(err) // a table stopped by the interrupt is not a failure: the sweep is interrupted
		}
	}()
}

// advance reports one more unit of work done.
func (s *sweeper) advance() {
	if s.o.Input.Progress != nil {
		s.o.Input.Progress.Advance(1)
	}
}

// fail records the first error.
func (s *sweeper) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *sweeper) note(format string, args ...any) {
	s.mu.Lock()
	s.res.Notes = append(s.res.Notes, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// emit finishes a point (bound, ratios) and hands it over.
func (s *sweeper) emit(ctx context.Context, p Point, bounds []Bound) {
	lr := LeverReport{Rows: p.Rows, Bounds: bounds}
	Summarize(&lr)
	p.Rows, p.BestBound, p.BestBoundBy, p.Infeasible = lr.Rows, lr.BestBound, lr.BestBoundBy, lr.Infeasible
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return // interrupted: only points completed before the signal are reported
	}
	s.res.Points = append(s.res.Points, p)
	if s.o.OnPoint != nil {
		s.o.OnPoint(p)
	}
	s.advance()
}

// remat sweeps the rematerialization lever: one table per DP, then one point per budget.
func (s *sweeper) remat(ctx context.Context) {
	in := s.o.Input
	// The budgets this lever's model works with (activationBudget), index for index with
	// s.o.Budgets, which the points report.
	budgets := make([]int64, len(s.o.Budgets))
	for k, b := range s.o.Budgets {
		budgets[k] = activationBudget(in, b)
	}
	c := in.Chain
	top := budgets[len(budgets)-1]
	for _, b := range budgets {
		top = max(top, b)
	}
	// The three tables are built side by side: each gets a third of the memory limit.
	opt := dp.Options{Slots: in.Slots, MaxMemory: memoryLimit(in) / 3, Stop: ctx.Done()}
	nslots := in.Slots
	if nslots == 0 {
		nslots = dp.DefaultSlots
	}
	type solver interface {
		Solve(int64) (dp.Result, error)
		Frontier() []dp.Point
	}
	names := []string{"persistent", "floating", "revolve"}
	// C_FL exact in bytes (its sub-chains' frontiers as breakpoints), when its frontiers stay
	// under the cap, gives every budget's optimum of 004's model from one table: the floating
	// row and an exact bound at once, with no per-budget floored table.
	var exactFL *dp.FloatingExact
	if c.Len() <= dp.MaxFloatingStages && ctx.Err() == nil {
		start := time.Now()
		f, err := dp.NewFloatingExact(c, top, dp.ExactOptions{MaxBreakpoints: in.MaxBreakpoints, MaxMemory: memoryLimit(in) / 3, Stop: ctx.Done()})
		if err == nil {
			exactFL = f
			s.note("remat: floating and the bound from C_FL exact in bytes (one table, %.2f s)", time.Since(start).Seconds())
		} else {
			s.note("remat: C_FL exact in bytes is out of reach (%v): %d slots", err, nslots)
		}
	}
	switch why := floatingOutOfReach(c.Len(), nslots, memoryLimit(in)/3); {
	case exactFL != nil:
	case why != "":
		names = []string{"persistent", "revolve"}
		s.note("remat: floating (C_FL) is out of reach (%s): not swept", why)
	}
	if why := floatingOutOfReach(c.Len(), nslots, maxSweepBoundBytes); why != "" && exactFL == nil {
		s.note("remat: the per-budget C_FL floored bound is out of reach (%s): bounds are Σ(u_f+u_b), the smallest feasible budget and, on ≤ %d stages, the exhaustive search", why, oracle.MaxStages)
	}
	tables := make([]solver, len(names))
	var tablesDone sync.WaitGroup
	for i, name := range names {
		tablesDone.Add(1)
		s.spawn(ctx, func() error {
			defer tablesDone.Done()
			var t solver
			var err error
			if name == "floating" && exactFL != nil {
				t = exactFL
			} else {
				st, _ := leverremat.Lookup(name)
				t, _, _, err = st.Table(c, top, leverremat.Options{DP: opt})
			}
			if err != nil {
				return fmt.Errorf("%s table: %w", name, err)
			}
			tables[i] = t
			s.mu.Lock()
			s.res.Frontiers[name] = t.Frontier()
			s.mu.Unlock()
			s.advance()
			return nil
		})
	}
	// Sequential: every segment count replayed once; each budget picks the fastest that fits.
	type seg struct {
		makespan float64
		peak     int64
	}
	var segs []seg
	for k := 1; k <= max(1, min(c.Len(), int(math.Ceil(2*math.Sqrt(float64(c.Len())))))); k++ {
		seq, err := checkpoint.Sequential(c, k)
		if err != nil {
			continue
		}
		if r, err := verify.Remat(c, seq, verify.RematOptions{}); err == nil {
			segs = append(segs, seg{r.Makespan, r.Peak})
		}
	}
	all, err := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
	if err != nil {
		panic("report: store-all does not replay: " + err.Error())
	}
	for k, b := range budgets {
		var bounds []Bound
		var boundDone sync.WaitGroup
		boundDone.Add(1)
		s.spawn(ctx, func() (err error) {
			defer boundDone.Done()
			bounds, err = sweepRematBounds(ctx, c, b, nslots, exactFL != nil)
			if err != nil || exactFL == nil {
				return err
			}
			r, err := exactFL.Solve(b)
			if err != nil {
				return err
			}
			eb := Bound{Name: "C_FL exact", Kind: DPOptimal, Exact: true, Value: r.Makespan, Infeasible: !r.Feasible}
			if !r.Feasible {
				eb.Value = 0
			}
			bounds = append(bounds, eb)
			return nil
		})
		// Reading a budget off the tables is cheap: it runs outside the pool, so that it never
		// holds a worker while the tables are being built.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if !waitOrDone(ctx, &tablesDone) || !waitOrDone(ctx, &boundDone) || bounds == nil {
				return
			}
			p := Point{Lever: "remat", Budget: s.o.Budgets[k]}
			for i, name := range names {
				if tables[i] == nil {
					return // its construction failed; the error is reported
				}
				r, err := tables[i].Solve(b)
				if err != nil {
					s.fail(fmt.Errorf("%s at %d B: %w", name, b, err))
					return
				}
				row := Row{Strategy: name}
				if r.Feasible {
					row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, r.Makespan, r.Peak
				}
				p.Rows = append(p.Rows, row)
			}
			row := Row{Strategy: "sequential"}
			for _, sg := range segs {
				if sg.peak <= b && (!row.Feasible || sg.makespan < row.Makespan) {
					row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, sg.makespan, sg.peak
				}
			}
			p.Rows = append(p.Rows, row)
			row = Row{Strategy: "store-all"}
			if all.Peak <= b {
				row.Feasible, row.Verified, row.Makespan, row.Peak = true, true, all.Makespan, all.Peak
			}
			p.Rows = append(p.Rows, row)
			s.emit(ctx, p, bounds)
		}()
	}
}

// waitOrDone waits for wg unless ctx ends first; it reports whether wg finished in time.
func waitOrDone(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// maxSweepBoundBytes caps the per-budget floored C_FL tables of a sweep (one per worker at once).
const maxSweepBoundBytes = 512 << 20

// sweepRematBounds is RematBounds without the C_FL tables built per budget, except the floored
// C_FL when the chain is within its reach and no exact table (haveExact) covers the sweep.
func sweepRematBounds(ctx context.Context, c *instances.Chain, b int64, nslots int, haveExact bool) ([]Bound, error) {
	bounds, _, err := tableFreeRematBounds(c, b)
	if err != nil || bounds[0].Infeasible {
		return bounds, err
	}
	if haveExact || floatingOutOfReach(c.Len(), nslots, maxSweepBoundBytes) != "" || ctx.Err() != nil {
		return bounds, nil
	}
	lb, feasible, err := dp.FloatingLowerBound(c, b, dp.Options{Slots: nslots})
	if err != nil {
		return nil, err
	}
	fl := Bound{Name: fmt.Sprintf("C_FL floored, %d slots", nslots), Kind: DPRelaxation, Value: lb, Infeasible: !feasible}
	if !feasible {
		fl.Value = 0 // +Inf has no JSON form; Infeasible says it
	}
	return append(bounds, fl), nil
}

// weights sweeps the weight-offloading lever: the heuristics per budget, bounds Σu and the
// forced prefetch volume (the MILP per budget is `certify`'s job: N time limits).
func (s *sweeper) weights(ctx context.Context) {
	in := s.o.Input
	s.note("weight-offload: the swept bounds are Σu and forced prefetch / β; run certify at one budget for the MILP bound")
	for _, b := range s.o.Budgets {
		s.spawn(ctx, func() error {
			p, err := offload.FromChain(in.Chain, b, in.Bandwidth)
			if err != nil {
				return err
			}
			pt := Point{Lever: "weight-offload", Budget: b}
			for _, st := range weightoffload.Strategies {
				row, err := weightRow(p, st, ctx.Done())
				if err != nil {
					return fmt.Errorf("at %d B: %w", b, err)
				}
				pt.Rows = append(pt.Rows, row)
			}
			s.emit(ctx, pt, WeightTrivialBounds(p))
			return nil
		})
	}
}

// acts sweeps the activation-offloading lever: the strategies and bounds per budget.
func (s *sweeper) acts(ctx context.Context) {
	in := s.o.Input
	if n := in.Chain.Len() + 1; n > ActSweepDPStages {
		s.note("act-offload: DYNPROG and the interruptible bound are not swept on %d operations (more than %d: seconds per budget); run certify at one budget for them", n, ActSweepDPStages)
	}
	for _, b := range s.o.Budgets {
		s.spawn(ctx, func() error {
			if activationBudget(in, b) <= 0 {
				at := in
				at.Budget = b
				s.emit(ctx, Point{Lever: "act-offload", Budget: b}, []Bound{weightsFillBound(at)})
				return nil
			}
			p, err := act.FromChain(in.Chain, activationBudget(in, b), in.Bandwidth)
			if err != nil {
				return err
			}
			withDP := p.L()+1 <= ActSweepDPStages
			dpOpt := dp.ActOptions{MaxMemory: memoryLimit(in) / int64(cap(s.sem)), Stop: ctx.Done()}
			bounds, _, err := ActBounds(p, withDP, dpOpt)
			if err != nil {
				return err
			}
			lb := 0.0
			for _, bd := range bounds {
				lb = math.Max(lb, bd.Value)
			}
			pt := Point{Lever: "act-offload", Budget: b}
			for _, st := range leveract.Strategies {
				if st.Use&leveract.InCertify == 0 || st.Name == "dynprog" && !withDP {
					continue
				}
				row, bd, err := actStrategyRow(p, st, lb, dpOpt)
				if err != nil {
					return fmt.Errorf("at %d B: %w", b, err)
				}
				pt.Rows = append(pt.Rows, row)
				if bd != nil {
					bounds = append(bounds, *bd)
					lb = math.Max(lb, bd.Value)
				}
			}
			s.emit(ctx, pt, bounds)
			return nil
		})
	}
}

// SweepRematOffloadTime is the time the combined DP gets at each budget of a sweep, and
// SweepRematOffloadPoint the whole lever's (its other strategies and its bounds included).
const (
	SweepRematOffloadTime  = 2 * time.Second
	SweepRematOffloadPoint = 8 * time.Second
)

// combined sweeps the lever of rematerialization and activation offloading together: every
// strategy and bound at each budget (pofo refining its slots for SweepRematOffloadTime).
func (s *sweeper) combined(ctx context.Context) {
	in := s.o.Input
	s.note("remat-offload: the combined DP refines its slots for %s per budget; its rows are strict makespans", SweepRematOffloadTime)
	for _, b := range s.o.Budgets {
		s.spawn(ctx, func() error {
			at := in
			at.Budget = b
			// Each budget's searches and bounds end by SweepRematOffloadPoint (what they stop
			// is a note of the point); the sweep's own deadline still counts.
			pctx, cancel := context.WithTimeout(ctx, SweepRematOffloadPoint)
			defer cancel()
			lr, err := rematOffloadAt(pctx, at, activationBudget(in, b), SweepRematOffloadTime)
			if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = nil // the point's time is up: what it has stands
			}
			if err != nil {
				return fmt.Errorf("remat-offload at %d B: %w", b, err)
			}
			s.emit(ctx, Point{Lever: "remat-offload", Budget: b, Rows: lr.Rows}, lr.Bounds)
			return nil
		})
	}
}
