package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	"github.com/memsched/memsched/instances"
	leverro "github.com/memsched/memsched/lever/rematoffload"
	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/milp/combinedlb"
	"github.com/memsched/memsched/report"
	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify/oracle"
)

// RematOffloadOptions are the flags of `memsched remat-offload`.
type RematOffloadOptions struct {
	ChainFile, Mem, Bandwidth, Algo, Slots, Inner string
	LinkSlots, MaxStates                          int
	NoPolish                                      bool
	// Solver and TimeLimit run the relaxation MILP (milp/combinedlb) where a MILP backend is
	// compiled in; NoMILP skips it.
	Solver    string
	TimeLimit float64
	NoMILP    bool
	// maxMemory is --max-memory, parsed.
	maxMemory string
}

// ComboBound is one lower bound of `memsched remat-offload`: its value in seconds (null when
// not computed), what certifies it, and what it bounds — "global" (every schedule of every
// lever) or "class" (only the schedules of the combined class, SPEC §6).
type ComboBound struct {
	Value       *float64 `json:"value"`
	CertifiedBy string   `json:"certified_by"`
	Scope       string   `json:"scope"`
	Note        string   `json:"note,omitempty"`
}

// ComboBounds are the lower bounds of `memsched remat-offload`.
type ComboBounds struct {
	// SumU is Σ(u_f + u_b): global.
	SumU ComboBound `json:"sum_u"`
	// Class is the optimum of the class in the fluid model without the turn's idle (exact
	// mode only): it bounds the strict schedules of the class, nothing else.
	Class ComboBound `json:"class_fluid"`
	// LinkCredit is the link-credit relaxation (dp.LinkCredit): global; null when no
	// algorithm found a schedule (its upper end) or its table was out of reach.
	LinkCredit *ComboBound `json:"link_credit"`
	// Kept is the kept-activation bound (dp.KeptActivations): global; null when no algorithm
	// found a schedule (its upper end), its value null when it proved nothing above the
	// bounds before it.
	Kept *ComboBound `json:"kept_activations"`
	// MILP is the combined lever's relaxation MILP, when a build has it (null otherwise).
	MILP *ComboBound `json:"milp"`
	// Exhaustive is the exhaustive search of strict schedules (oracle.Strict) on chains of at
	// most 7 stages: the exact optimum, global (null on longer chains).
	Exhaustive *ComboBound `json:"exhaustive,omitempty"`
	// Best is the largest global bound, the ratios' reference, and BestBy its name (sum_u,
	// link_credit, kept_activations, exhaustive or milp).
	Best   float64 `json:"best_global"`
	BestBy string  `json:"best_global_by"`
}

// ComboDP is the dynamic program's own account of its answer (pofo only).
type ComboDP struct {
	Value     float64 `json:"value"`
	Exact     bool    `json:"exact"`
	Inner     string  `json:"inner"`
	SlotSize  int64   `json:"slot_size"`
	ExactLink bool    `json:"exact_link"`
	States    int     `json:"states"`
}

// ComboResult is one algorithm's answer. JSON: the algorithm's name is "algorithm", as in
// every command's output; "algo", its key before 0.2, is written too until then (MarshalJSON).
type ComboResult struct {
	Algo     string `json:"algorithm"`
	Feasible bool   `json:"feasible"`
	// ModelMakespan is the algorithm's plan's makespan in the fluid model of SPEC §6 (null
	// when the algorithm found no plan and its schedule is a rematerialization sequence);
	// Makespan the strict re-timed schedule's (verify/combined.Check), after polishing kept
	// Kept of the inputs the plan offloads (Plan is the plan that was re-timed).
	ModelMakespan  *float64               `json:"model_makespan"`
	Makespan       *float64               `json:"makespan"`
	Ratio          *float64               `json:"ratio_to_best_bound"`
	Peak           int64                  `json:"peak_memory"`
	Idle           float64                `json:"idle"`
	Offloaded      int                    `json:"offloaded"`
	Kept           int                    `json:"kept_by_polish"`
	OffloadedBytes int64                  `json:"offloaded_bytes"`
	Verified       bool                   `json:"verified"`
	Seconds        float64                `json:"seconds"`
	DP             *ComboDP               `json:"dp,omitempty"`
	Plan           *schedule.CombinedPlan `json:"plan,omitempty"`
	Schedule       *schedule.Combined     `json:"schedule,omitempty"`
	Note           string                 `json:"note,omitempty"`
}

// MarshalJSON writes r with the deprecated alias "algo" of "algorithm" (kept for one release,
// docs/README.md "Changes").
func (r ComboResult) MarshalJSON() ([]byte, error) {
	type plain ComboResult
	return json.Marshal(struct {
		plain
		AlgoAlias string `json:"algo"`
	}{plain(r), r.Algo})
}

// ComboReport is the output of `memsched remat-offload`.
type ComboReport struct {
	Chain       string        `json:"chain"`
	Stages      int           `json:"stages"`
	Budget      int64         `json:"budget"`
	Bandwidth   float64       `json:"bandwidth"`
	Results     []ComboResult `json:"results"`
	LowerBounds ComboBounds   `json:"lower_bounds"`
}

func newRematOffloadCmd(io *IO) *cobra.Command {
	o := &RematOffloadOptions{}
	cmd := &cobra.Command{
		Use:   "remat-offload --mem SIZE --bandwidth RATE [--chain FILE] [--algo " + strings.Join(leverro.Names(), "|") + "|all] [--slots N|exact]",
		Short: "Rematerialization and activation offloading together (003's POFO, SPEC §6), validated",
		Long: `remat-offload recomputes some activations and sends others to the CPU over the link, together
(SPEC §6): the first forward pass is cut into segments, each F_all^s alone or F_ck^s F_∅ … F_∅^e
recomputed later by a persistent sequence (004), and each segment's input is kept on the GPU or
offloaded while the rest of the chain runs. Algorithms:
` + comboAlgoHelp() + `
Each algorithm's plan is evaluated in the fluid model of SPEC §6 (model_makespan; bytes leave
and arrive progressively), then re-timed as an executable schedule — a compute stream and one
half-duplex link moving whole tensors, synchronized by dependencies — and validated under strict
timing by verify/combined (makespan). Inputs the plan offloads are kept, one at a time, while
that shortens the strict schedule (kept_by_polish), and pofo also plans for links of 0.7, 0.5
and 0.85 times the bandwidth, each plan re-timed at the real one, and keeps the fastest: the
fluid model overrates what whole tensors on one link can do (--no-polish skips both).
sequence-offload builds schedules outside the class (no plan): 004 sequences with any stored
tensor offloaded. Bounds: Σ(u_f+u_b), the link credit (dp.LinkCredit: the budget plus what one
link can keep away around each operation; lower_bounds.link_credit, computed as certify
computes it, beside pofo and sequence-offload from the quick heuristics' fastest schedule) and
the kept-activation bound (dp.KeptActivations: which stages keep ā from their first forward,
with whole tensors away; lower_bounds.kept_activations, after the link credit, 10 s at most)
bound every schedule; with --slots exact the optimum of the class in the fluid model without
the turn's idle bounds the class's strict schedules only (docs/remat-offload.md); the
relaxation MILP (milp/combinedlb) bounds every schedule (lower_bounds.milp); on chains of at
most 7 stages the exhaustive search of every strict schedule (oracle.Strict;
lower_bounds.exhaustive) proves the optimum or, stopped at its cap (2 Mi configurations, 512 Ki
on measured float durations) or by the time limit, the bound it had reached (A*'s least time +
estimate still queued). An infeasible budget is a result, not an error. --time-limit covers
the whole command, --max-memory the MILP's model (it grows as the cube of the chain's length)
and each C_MP table of the heuristics: what they stop is a note in the output, never a wrong
number.`,
		Example: `  memsched remat-offload --mem 80MiB --bandwidth 1GB/s                     # toy chain, the DP
  memsched remat-offload --mem 80MiB --bandwidth 1GB/s --algo all --json
  memsched gen zoo resnet --depth 101 --batch 32 -o r101.json
  memsched remat-offload --chain r101.json --mem 1800MiB --bandwidth 12GB/s --slots 400
  memsched remat-offload --chain tiny.json --mem 12B --bandwidth 2B/s --slots exact   # the exact class optimum
  memsched remat-offload --mem 80MiB --bandwidth 1GB/s --json | jq .results[0].schedule > s.json
  memsched verify --problem remat-offload --mem 80MiB --bandwidth 1GB/s --schedule s.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRematOffload(o, io) },
	}
	f := cmd.Flags()
	f.StringVar(&o.ChainFile, "chain", "", "chain file (memsched.chain/v1); default: the built-in toy chain")
	f.StringVar(&o.Mem, "mem", "", "memory budget, everything included (e.g. 80MiB)")
	f.StringVar(&o.Bandwidth, "bandwidth", "", bandwidthUsage+"; one link, one transfer at a time")
	f.StringVar(&o.Algo, "algo", "pofo", strings.Join(leverro.Names(), "|")+"|all")
	f.StringVar(&o.Slots, "slots", strconv.Itoa(dp.DefaultSlots), "memory units of the DP (sizes rounded up, budget and link down), or exact: bytes")
	f.StringVar(&o.Inner, "inner", "auto", "the DP's minimization over backward sequences: exact | restricted | auto (exact with --slots exact)")
	f.IntVar(&o.LinkSlots, "link-slots", 0, "the DP's grid for queued and backlogged bytes, coarser than --slots (0: the same)")
	f.IntVar(&o.MaxStates, "max-states", 0, "cap on the DP's states (0: 20000000); above it the DP stops with an error")
	f.BoolVar(&o.NoPolish, "no-polish", false, "re-time each algorithm's plan as it is (by default inputs it offloads are kept while that shortens the strict schedule, and pofo also plans for slower links)")
	f.Float64Var(&o.TimeLimit, "time-limit", 60, "wall-time budget in seconds of the whole command, every table included: the algorithms share it (the quick heuristics first, each an equal share of what is left), one still searching at the end of its share stops and its row says so; the link credit runs beside pofo and sequence-offload (with half of --max-memory) and, when the relaxation MILP follows, stops at half of what they leave; the MILP and the class bound get the rest")
	addMaxMemoryFlag(f, &o.maxMemory)
	f.StringVar(&o.Solver, "solver", "", "MILP backend of the relaxation: highs|lpsolve (default: the best compiled in)")
	f.BoolVar(&o.NoMILP, "no-milp", false, "skip the relaxation MILP")
	return cmd
}

// comboAlgoHelp lists remat-offload's algorithms for its help: the registry's strategies.
func comboAlgoHelp() string {
	var es []helpEntry
	for _, st := range leverro.Strategies {
		es = append(es, helpEntry{st.Name, st.Summary})
	}
	return strategyHelp(append(es, helpEntry{"all", "every algorithm in one table"}))
}

func runRematOffload(o *RematOffloadOptions, io *IO) error {
	start := time.Now()
	if o.Mem == "" {
		return usageErrorf("remat-offload: --mem is required (e.g. --mem 80MiB)")
	}
	budget, err := budgetFlag("--mem", o.Mem)
	if err != nil {
		return err
	}
	beta, err := bandwidthFlag(o.Bandwidth)
	if err != nil {
		return err
	}
	algos := []string{o.Algo}
	if o.Algo == "all" {
		algos = leverro.Names()
	} else if _, ok := leverro.Lookup(o.Algo); !ok {
		return usageErrorf("remat-offload: unknown --algo %q (want %s)", o.Algo, orList(append(leverro.Names(), "all")))
	}
	slots, exact := 0, strings.EqualFold(o.Slots, "exact")
	if !exact {
		if slots, err = strconv.Atoi(o.Slots); err != nil || slots < 1 || slots > maxSlots {
			return usageErrorf("remat-offload: --slots must be a number in 1..%d or exact, got %q", maxSlots, o.Slots)
		}
	}
	var inner dp.Inner
	switch o.Inner {
	case "auto":
	case "exact":
		inner = dp.InnerExact
	case "restricted":
		inner = dp.InnerRestricted
	default:
		return usageErrorf("remat-offload: --inner must be exact, restricted or auto, got %q", o.Inner)
	}
	if o.LinkSlots < 0 {
		return usageErrorf("remat-offload: --link-slots must be ≥ 0, got %d", o.LinkSlots)
	}
	if o.MaxStates < 0 {
		return usageErrorf("remat-offload: --max-states must be ≥ 0, got %d", o.MaxStates)
	}
	c, source, err := loadChain(o.ChainFile)
	if err != nil {
		return err
	}
	if err := checkTimeLimit(o.TimeLimit); err != nil {
		return err
	}
	maxMem, err := maxMemoryFlag(o.maxMemory)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeLimit(context.Background(), start, o.TimeLimit)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var solvers []milp.Solver
	if !o.NoMILP && (o.Solver != "" || realMILPBackend()) {
		if solvers, err = boundSolvers(o.Solver); err != nil {
			return err
		}
		if solvers[0].Name() == "ref" {
			solvers = nil // the enumerating referee: no MILP of this size
		}
	}
	opt := leverro.Options{Slots: slots, Exact: exact, Inner: inner, LinkSlots: o.LinkSlots, MaxStates: o.MaxStates, NoPolish: o.NoPolish, Deadline: deadline, MaxMemory: maxMem}
	// The link credit runs beside the algorithms that search (as certify's combined lever runs
	// it), from the fastest verified makespan of the quick heuristics, with half the memory
	// limit: after them it did not start within --time-limit 10 on DenseNet-201 at 10 %.
	var credit *report.LinkCreditRun
	startCredit := func(upper float64) bool {
		if ctx.Err() != nil || upper <= c.ComputeTime()*(1+1e-9) {
			return false
		}
		credit = report.StartLinkCredit(ctx, report.Input{Chain: c, Bandwidth: beta, MaxMemory: maxMem}, budget, upper, maxMem/2)
		return true
	}
	rep, err := RunRematOffload(c, source, budget, beta, algos, opt, startCredit)
	if err != nil {
		if credit != nil {
			credit.Abandon()
		}
		return err
	}
	if err := comboGlobalBounds(ctx, rep, c, budget, beta, solvers, maxMem, credit); err != nil {
		return err
	}
	if io.JSON {
		return io.PrintJSON(rep)
	}
	return printRematOffload(io, rep)
}

// comboGlobalBounds adds the link credit (credit, when it was started beside the algorithms),
// the exhaustive search (short chains) and the relaxation MILP (with solvers) to rep, within
// ctx. A verified schedule at Σ(u_f+u_b) is optimal: then none is run, each saying so (on 2001
// stages the MILP took 13 s to find its model too large, after sequence-offload had met Σu in
// 0.3 s).
func comboGlobalBounds(ctx context.Context, rep *ComboReport, c *instances.Chain, budget int64, beta float64, solvers []milp.Solver, maxMem int64, credit *report.LinkCreditRun) error {
	if up := comboUpper(rep); up > 0 && up <= *rep.LowerBounds.SumU.Value*(1+1e-9) {
		if credit != nil {
			credit.Abandon()
		}
		const why = "not run: a verified schedule meets Σ(u_f+u_b), proven optimal"
		rep.LowerBounds.LinkCredit = &ComboBound{Scope: "global", CertifiedBy: dp.LinkCreditCertificate, Note: why}
		rep.LowerBounds.Kept = &ComboBound{Scope: "global", CertifiedBy: dp.KeptActivationsCertificate, Note: why}
		if c.Len() <= oracle.MaxStrictStages {
			rep.LowerBounds.Exhaustive = &ComboBound{Scope: "global", CertifiedBy: "exhaustive search of every strict schedule of the combined model", Note: why}
		}
		if solvers != nil {
			rep.LowerBounds.MILP = &ComboBound{Scope: "global", CertifiedBy: "relaxation MILP (milp/combinedlb): " + why}
		}
		return nil
	}
	// The link credit gets half of what the algorithms left when the MILP follows, all of it
	// otherwise.
	lctx, lcancel := ctx, context.CancelFunc(func() {})
	if solvers != nil {
		lctx, lcancel = shareOf(ctx, 0.5)
	}
	err := comboLinkCredit(lctx, rep, c, budget, beta, maxMem, credit)
	lcancel()
	if err != nil {
		return err
	}
	if err := comboKept(ctx, rep, c, budget, beta); err != nil {
		return err
	}
	if err := comboExhaustive(ctx, rep, c, budget, beta, maxMem); err != nil {
		return err
	}
	if solvers != nil {
		if err := comboMILP(ctx, rep, c, budget, beta, solvers, maxMem); err != nil {
			return err
		}
	}
	return nil
}

// RunRematOffload runs the algorithms and computes the class bound. The quick heuristics
// (leverro.Strategy.Quick) run first, their fastest verified makespan then goes to started
// (nil: none), which starts work beside the others and says whether it did (then they get half
// of opt.MaxMemory), and the rows keep the order of algos.
func RunRematOffload(c *instances.Chain, source string, budget int64, beta float64, algos []string, opt leverro.Options, started func(upper float64) bool) (*ComboReport, error) {
	rep := &ComboReport{Chain: source, Stages: c.Len(), Budget: budget, Bandwidth: beta}
	sumU := c.ComputeTime()
	rep.LowerBounds = ComboBounds{
		SumU:   ComboBound{Value: &sumU, Scope: "global", CertifiedBy: "every stage's forward and backward once, no recomputation, no idle"},
		Class:  ComboBound{Scope: "class", CertifiedBy: "optimum of the combined class in the fluid model of SPEC §6 without the turn's idle (dp.Combined in bytes, exact inner minimization; equal to the exhaustive search on tiny chains): a relaxation of strict timing for plans of the class; it bounds the strict schedules of the class only, not rematerialization or offloading schedules outside it"},
		Best:   sumU,
		BestBy: "sum_u",
	}
	order := make([]string, 0, len(algos))
	for _, pass := range []bool{true, false} {
		for _, a := range algos {
			if st, _ := leverro.Lookup(a); st.Quick() == pass {
				order = append(order, a)
			}
		}
	}
	begun := started == nil
	for i, a := range order {
		st, _ := leverro.Lookup(a)
		if !begun && !st.Quick() {
			begun = true
			if up := comboUpper(rep); up > 0 && started(up) && opt.MaxMemory > 0 {
				opt.MaxMemory /= 2
			}
		}
		start := time.Now()
		if passed(opt.Deadline) {
			rep.Results = append(rep.Results, ComboResult{Algo: a, Note: "not run: the time limit (--time-limit) was spent"})
			continue
		}
		// Each algorithm gets an equal share of the time left (what one leaves goes to the
		// next): the DP alone would take it all on a long chain, and the heuristics none.
		o := opt
		if !opt.Deadline.IsZero() {
			o.Deadline = start.Add(opt.Deadline.Sub(start) / time.Duration(len(algos)-i))
		}
		for _, r := range rep.Results {
			if r.Feasible && (o.Upper == 0 || *r.Makespan < o.Upper) {
				o.Upper = *r.Makespan
			}
			if r.Feasible && r.Schedule != nil {
				o.Seeds = append(o.Seeds, r.Schedule)
			}
		}
		out, err := st.Run(c, budget, beta, o)
		switch {
		case errors.Is(err, dp.ErrDeadline) || errors.Is(err, dp.ErrStopped):
			rep.Results = append(rep.Results, ComboResult{Algo: a, Seconds: time.Since(start).Seconds(),
				Note: "stopped at the end of its share of --time-limit before it had a plan: " + err.Error()})
			continue
		case errors.As(err, new(*dp.TooLargeError)):
			rep.Results = append(rep.Results, ComboResult{Algo: a, Seconds: time.Since(start).Seconds(), Note: "not run: " + err.Error()})
			continue
		case errors.Is(err, dp.ErrTooManyStates):
			rep.Results = append(rep.Results, ComboResult{Algo: a, Seconds: time.Since(start).Seconds(),
				Note: "not finished: " + err.Error() + " (--max-states, or fewer --slots / --link-slots)"})
			continue
		case err != nil:
			return nil, fmt.Errorf("remat-offload: %w", err)
		}
		res := ComboResult{Algo: a, Seconds: time.Since(start).Seconds()}
		if r := out.DP; r != nil {
			res.DP = &ComboDP{Value: r.Value, Exact: r.Exact(), Inner: r.Inner.String(), SlotSize: r.SlotSize, ExactLink: r.ExactLink, States: r.States}
		}
		var planned float64 // the slower link pofo's row was planned for (0: β)
		if a == "pofo" && !o.NoPolish && out.Feasible && out.ModelPlan != nil {
			if out, planned, err = slowerLinkPlans(c, budget, beta, st, o, out); err != nil {
				return nil, fmt.Errorf("remat-offload: %w", err)
			}
			res.Seconds = time.Since(start).Seconds()
		}
		if !out.Feasible {
			res.Note = cmp.Or(out.Why, "no plan of this algorithm fits the budget")
			rep.Results = append(rep.Results, res)
			continue
		}
		fm, sm := out.ModelFluid.Makespan, out.Report.Makespan
		if sm < rep.LowerBounds.Best*(1-1e-9) {
			return nil, fmt.Errorf("remat-offload: %s's verified makespan %g is below the bound Σu = %g (bug)", a, sm, rep.LowerBounds.Best)
		}
		res.Feasible, res.Verified = true, true
		res.Makespan, res.Ratio = &sm, ratioTo(sm, rep.LowerBounds.Best)
		if out.ModelPlan != nil {
			res.ModelMakespan = &fm
		}
		res.Peak, res.Idle = out.Report.Peak, out.Report.Idle
		res.Offloaded, res.OffloadedBytes, res.Kept = out.Report.Offloaded, out.Report.OffloadedBytes, out.Kept
		res.Plan, res.Schedule = out.Plan, out.Schedule
		switch {
		case st.Direct():
			res.Note = out.Source
		case out.Source != "":
			res.Note = "the schedule is " + out.Source + ": faster under strict timing than the plan's"
		case planned > 0:
			res.Note = fmt.Sprintf("the plan for a %s link, re-timed at %s: faster under strict timing than the plan for %s", instances.FormatRate(planned), instances.FormatRate(beta), instances.FormatRate(beta))
		}
		if out.Stopped {
			res.Note = strings.TrimPrefix(res.Note+"; stopped at the end of its share of --time-limit: the best plan found before it", "; ")
		}
		rep.Results = append(rep.Results, res)
	}
	pos := make(map[string]int, len(algos))
	for i, a := range algos {
		pos[a] = i
	}
	slices.SortStableFunc(rep.Results, func(a, b ComboResult) int { return cmp.Compare(pos[a.Algo], pos[b.Algo]) })
	// The class bound after the algorithms: the rows are what the user asked for, the bound
	// gets the time they leave.
	if opt.Exact {
		start := time.Now()
		r, err := dp.Combined(c, budget, beta, dp.CombinedOptions{Exact: true, Inner: dp.InnerExact, FreeTurn: true, MaxStates: opt.MaxStates,
			Deadline: opt.Deadline, MaxMemory: opt.MaxMemory, RequireExactLink: true})
		switch {
		case passed(opt.Deadline) && start.After(opt.Deadline):
			rep.LowerBounds.Class.Note = "not computed: the time limit (--time-limit) was spent by the algorithms"
		case errors.Is(err, dp.ErrDeadline):
			rep.LowerBounds.Class.Note = fmt.Sprintf("not computed: stopped at the time limit (--time-limit) after %.2f s", time.Since(start).Seconds())
		case err != nil:
			rep.LowerBounds.Class.Note = "not computed: " + err.Error()
		case !r.ExactLink:
			rep.LowerBounds.Class.Note = "not computed: β·u is not a whole number of bytes for every operation"
		case !r.Feasible:
			rep.LowerBounds.Class.Note = fmt.Sprintf("no plan of the class fits (%.2f s)", time.Since(start).Seconds())
		default:
			v := r.Fluid.Makespan
			rep.LowerBounds.Class.Value = &v
			rep.LowerBounds.Class.Note = fmt.Sprintf("%.2f s, %d states", time.Since(start).Seconds(), r.States)
		}
	} else {
		rep.LowerBounds.Class.Note = "not computed: exact mode only (--slots exact); with slots the DP's value bounds nothing"
	}
	if cb := rep.LowerBounds.Class.Value; cb != nil {
		for _, r := range rep.Results {
			if r.Feasible && *r.Makespan < *cb*(1-1e-9) {
				return nil, fmt.Errorf("remat-offload: %s's verified makespan %g is below the class bound %g (bug)", r.Algo, *r.Makespan, *cb)
			}
		}
	}
	return rep, nil
}

// slowerLinkPlans runs pofo again planning for each of leverro.SlowerLinks·β
// (Options.PlanBandwidth), each plan re-timed, polished and checked at β, while o's deadline
// allows, and returns the fastest outcome under strict timing (out itself if none is faster)
// and the rate it was planned for (0: β). The fluid model overrates what whole tensors on one
// link can do (docs/remat-offload.md, "Plans for slower links"). A run stopped by the deadline,
// the state cap or the memory limit is skipped; any other error is returned.
func slowerLinkPlans(c *instances.Chain, budget int64, beta float64, st leverro.Strategy, o leverro.Options, out leverro.Outcome) (leverro.Outcome, float64, error) {
	best, rate := out, 0.0
	for _, f := range leverro.SlowerLinks {
		if passed(o.Deadline) {
			break
		}
		q := o
		q.PlanBandwidth = f * beta
		// The β run weighed rematerialization already (C_MP exact in bytes when o.Remat is
		// nil): out is what a plan for a slower link must beat.
		q.Remat = []schedule.Sequence{}
		d, err := st.Run(c, budget, beta, q)
		switch {
		case errors.Is(err, dp.ErrDeadline) || errors.Is(err, dp.ErrStopped) || errors.Is(err, dp.ErrTooManyStates) || errors.As(err, new(*dp.TooLargeError)):
			continue
		case err != nil:
			return out, 0, err
		}
		if d.Feasible && d.Report.Exact.Cmp(best.Report.Exact) < 0 {
			best, rate = d, q.PlanBandwidth
		}
	}
	return best, rate, nil
}

func printRematOffload(io *IO, rep *ComboReport) error {
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "chain\t%s (%d stages)\nbudget\t%s\nbandwidth\t%s (one link, one transfer at a time)\n", rep.Chain, rep.Stages,
		instances.FormatSize(rep.Budget), instances.FormatRate(rep.Bandwidth))
	b := rep.LowerBounds
	fmt.Fprintf(w, "bound Σu (global)\t%s\t%s\n", instances.FormatDuration(*b.SumU.Value), b.SumU.CertifiedBy)
	if ex := b.Exhaustive; ex != nil {
		v := "-"
		if ex.Value != nil {
			v = instances.FormatDuration(*ex.Value)
		}
		fmt.Fprintf(w, "bound exhaustive (global)\t%s\t%s\n", v, ex.Note)
	}
	if lc := b.LinkCredit; lc != nil {
		v := "-"
		if lc.Value != nil {
			v = instances.FormatDuration(*lc.Value)
		}
		fmt.Fprintf(w, "bound credit (global)\t%s\t%s\n", v, lc.Note)
	}
	if kb := b.Kept; kb != nil {
		v := "-"
		if kb.Value != nil {
			v = instances.FormatDuration(*kb.Value)
		}
		fmt.Fprintf(w, "bound kept (global)\t%s\t%s\n", v, kb.Note)
	}
	if m := b.MILP; m != nil {
		v := "-"
		if m.Value != nil {
			v = instances.FormatDuration(*m.Value)
		}
		fmt.Fprintf(w, "bound milp (global)\t%s\t%s\n", v, m.CertifiedBy)
	}
	if b.Class.Value != nil {
		fmt.Fprintf(w, "bound class (class only)\t%s\t%s\n", instances.FormatDuration(*b.Class.Value), b.Class.Note)
	} else {
		fmt.Fprintf(w, "bound class (class only)\t-\t%s\n", b.Class.Note)
	}
	ref := "Σu"
	if b.Best > *b.SumU.Value*(1+1e-12) {
		ref = "bound"
	}
	fmt.Fprintf(w, "\nalgorithm\tfluid\tstrict\tover %s\toffloaded\tpeak\tverified\ttime\n", ref)
	for _, r := range rep.Results {
		if !r.Feasible {
			fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\t-\t%.2f s: %s\n", r.Algo, r.Seconds, r.Note)
			continue
		}
		name := r.Algo
		if r.DP != nil {
			mode := fmt.Sprintf("slots of %s, inner %s", instances.FormatSize(r.DP.SlotSize), r.DP.Inner)
			if r.DP.Exact {
				mode = "exact"
			}
			name += " (" + mode + ")"
		}
		model := "-"
		if r.ModelMakespan != nil {
			model = instances.FormatDuration(*r.ModelMakespan)
		}
		if *r.Makespan <= b.Best*(1+1e-9) {
			name += " (proven optimal by " + map[string]string{"sum_u": "Σu", "link_credit": "the link credit", "kept_activations": "the kept-activation bound", "milp": "the relaxation MILP", "exhaustive": "the exhaustive search"}[b.BestBy] + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d (%s)\t%s\tyes\t%.2f s\n", name, model,
			instances.FormatDuration(*r.Makespan), overBound(*r.Makespan, rep.LowerBounds.Best), r.Offloaded, instances.FormatSize(r.OffloadedBytes),
			instances.FormatSize(r.Peak), r.Seconds)
	}
	for _, r := range rep.Results {
		if r.Feasible && r.Note != "" {
			fmt.Fprintf(w, "\nnote (%s)\t%s\n", r.Algo, r.Note)
		}
		if r.Feasible && len(rep.Results) == 1 && r.Plan != nil {
			fmt.Fprintf(w, "\nplan\t%v\n", r.Plan)
		}
	}
	return w.Flush()
}

// comboUpper is the fastest verified makespan of the report's rows, 0 when none has one.
func comboUpper(rep *ComboReport) float64 {
	upper := 0.0
	for _, r := range rep.Results {
		if r.Feasible && (upper == 0 || *r.Makespan < upper) {
			upper = *r.Makespan
		}
	}
	return upper
}

// comboMILP solves the relaxation MILP of the combined model (milp/combinedlb: a lower bound
// on every strict schedule, not only the class's) against the best verified makespan of the
// report, reports it as lower_bounds.milp, and takes it as the ratios' reference when above Σu.
// A verified makespan below it is a bug, never printed.
func comboMILP(ctx context.Context, rep *ComboReport, c *instances.Chain, budget int64, beta float64, solvers []milp.Solver, maxMemory int64) error {
	verified := math.NaN()
	for _, r := range rep.Results {
		if r.Feasible && (math.IsNaN(verified) || *r.Makespan < verified) {
			verified = *r.Makespan
		}
	}
	start := time.Now()
	if ctx.Err() != nil {
		rep.LowerBounds.MILP = &ComboBound{Scope: "global", CertifiedBy: "relaxation MILP (milp/combinedlb): not run, the time limit (--time-limit) was spent by the algorithms"}
		return nil
	}
	b, err := combinedlb.Solve(ctx, solvers, c, budget, beta, milp.Params{}, verified, maxMemory)
	var tl *combinedlb.TooLargeError
	if errors.As(err, &tl) {
		rep.LowerBounds.MILP = &ComboBound{Scope: "global", CertifiedBy: "relaxation MILP: not run: " + err.Error()}
		return nil
	}
	if err != nil {
		return err
	}
	if b.Guarded == nil { // stopped while its model was built
		rep.LowerBounds.MILP = &ComboBound{Scope: "global", Note: fmt.Sprintf("%s, %.2f s", b.Status, time.Since(start).Seconds()),
			CertifiedBy: "relaxation MILP (milp/combinedlb): stopped at the time limit (--time-limit) while its model was built"}
		return nil
	}
	cb := &ComboBound{Scope: "global", Note: fmt.Sprintf("%s, %s, %.2f s", b.Status, b.Guarded.Solver, time.Since(start).Seconds())}
	switch {
	case math.IsNaN(b.Value):
		cb.CertifiedBy = "relaxation MILP (milp/combinedlb): no answer could be believed: " + b.Guarded.Contradiction
	case math.IsInf(b.Value, 1):
		cb.CertifiedBy = "relaxation MILP (milp/combinedlb) infeasible: no schedule of the combined model fits"
	case !b.Own:
		cb.CertifiedBy = "relaxation MILP (milp/combinedlb): stopped at the time limit (--time-limit) before the solver had a bound"
		if b.Guarded.Abandoned {
			cb.CertifiedBy += "; the solver did not stop at the limit and was abandoned"
		}
	default:
		v := b.Value
		cb.Value = &v
		what := "optimum"
		if b.Status != milp.Optimal {
			what = "proven dual bound at " + b.Status.String()
		}
		cb.CertifiedBy = "relaxation MILP of every strict schedule (milp/combinedlb, docs/bounds.md): " + what
		if v > rep.LowerBounds.Best {
			rep.LowerBounds.Best, rep.LowerBounds.BestBy = v, "milp"
		}
	}
	rep.LowerBounds.MILP = cb
	for i := range rep.Results {
		r := &rep.Results[i]
		if !r.Feasible {
			continue
		}
		if *r.Makespan < rep.LowerBounds.Best*(1-1e-9) {
			return fmt.Errorf("remat-offload: %s's verified makespan %g is below the relaxation's bound %g (bug)", r.Algo, *r.Makespan, rep.LowerBounds.Best)
		}
		r.Ratio = ratioTo(*r.Makespan, rep.LowerBounds.Best)
	}
	return nil
}

// comboLinkCredit reports the link-credit bound (dp.LinkCredit: global) as
// lower_bounds.link_credit, computed as certify computes it (report.StartLinkCredit: a thinned
// table, then the exact one with its whole-tensor probes) — by credit when it was started
// beside the algorithms, here otherwise, with the fastest verified makespan of the report as
// its upper end — and takes it as the ratios' reference when above the others. A verified
// makespan below it is a bug, never printed.
func comboLinkCredit(ctx context.Context, rep *ComboReport, c *instances.Chain, budget int64, beta float64, maxMemory int64, credit *report.LinkCreditRun) error {
	upper := comboUpper(rep)
	if upper == 0 {
		if credit != nil {
			credit.Abandon()
		}
		return nil
	}
	lc := &ComboBound{Scope: "global", CertifiedBy: dp.LinkCreditCertificate}
	rep.LowerBounds.LinkCredit = lc
	if credit == nil {
		if ctx.Err() != nil {
			lc.Note = "not run: the time limit (--time-limit) was spent by the algorithms"
			return nil
		}
		credit = report.StartLinkCredit(ctx, report.Input{Chain: c, Bandwidth: beta, MaxMemory: maxMemory}, budget, upper, maxMemory)
	}
	b, ok, notes := credit.Wait(ctx, upper)
	for i, n := range notes {
		notes[i] = strings.TrimPrefix(n, "link credit: ")
	}
	if !ok {
		lc.Note = strings.Join(notes, "; ")
		return nil
	}
	// CertifiedBy holds the certificate; the note says how this bound was computed.
	how := strings.TrimPrefix(strings.TrimPrefix(b.Note, dp.LinkCreditCertificate), "; ")
	lc.Note = strings.Join(append([]string{fmt.Sprintf("%.2f s, %s", b.Seconds, how)}, notes...), "; ")
	return comboBoundValue(rep, lc, b.Value, "link_credit")
}

// comboBoundValue records a global bound's value v in b (named name in best_global_by) and
// as the best bound when it is, and checks every verified result against it.
func comboBoundValue(rep *ComboReport, b *ComboBound, v float64, name string) error {
	b.Value = &v
	if v > rep.LowerBounds.Best {
		rep.LowerBounds.Best, rep.LowerBounds.BestBy = v, name
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		if !r.Feasible {
			continue
		}
		if *r.Makespan < rep.LowerBounds.Best*(1-1e-9) {
			return fmt.Errorf("remat-offload: %s's verified makespan %g is below the %s bound %g (bug)", r.Algo, *r.Makespan, rep.LowerBounds.BestBy, rep.LowerBounds.Best)
		}
		r.Ratio = ratioTo(*r.Makespan, rep.LowerBounds.Best) // 0 over 0 meets it: no NaN
	}
	return nil
}

// comboKept reports the kept-activation bound (dp.KeptActivations: global, tensor-aware where
// the link credit counts bytes) as lower_bounds.kept_activations, as certify computes it: from
// the best global bound at hand up to the fastest verified result, the results' sequences as
// the search's hints, in a third of what is left and 10 s at most (certify gives it pofo's
// 10 s) — where its search does not end it would otherwise take the MILP's time. On
// Inception v3 at 75 %, 12 GB/s no other bound rises above Σu (139.74 ms); this one reaches
// 142.11 ms against the fastest result's 142.50.
func comboKept(ctx context.Context, rep *ComboReport, c *instances.Chain, budget int64, beta float64) error {
	upper := comboUpper(rep)
	if upper == 0 {
		return nil
	}
	kb := &ComboBound{Scope: "global", CertifiedBy: dp.KeptActivationsCertificate}
	rep.LowerBounds.Kept = kb
	switch {
	case upper <= rep.LowerBounds.Best*(1+1e-9):
		kb.Note = "not run: the fastest result meets the " + rep.LowerBounds.BestBy + " bound"
		return nil
	case ctx.Err() != nil:
		kb.Note = "not run: the time limit (--time-limit) was spent"
		return nil
	}
	var hints []schedule.Sequence
	for _, r := range rep.Results {
		if r.Feasible && r.Schedule != nil {
			hints = append(hints, r.Schedule.Sequence())
		}
	}
	kctx, cancel := shareOf(ctx, 1.0/3)
	defer cancel()
	kctx, cancel10 := context.WithTimeout(kctx, keptLimit)
	defer cancel10()
	start := time.Now()
	lower := rep.LowerBounds.Best
	r, err := dp.KeptActivations(c, budget, beta, dp.KeptOptions{Upper: upper, Lower: lower, Stop: kctx.Done(), Hints: hints})
	var scope *dp.KeptScopeError
	switch {
	case errors.As(err, &scope):
		kb.Note = "not run: " + strings.TrimPrefix(err.Error(), "dp: kept-activation bound: ")
		return nil
	case errors.Is(err, dp.ErrKeptUpper):
		return fmt.Errorf("remat-offload: the fastest verified result (%g s) does not pass the kept-activation bound (bug)", upper)
	case err != nil:
		return err
	}
	kb.Note = fmt.Sprintf("%.2f s, %d probe%s, %d search nodes", time.Since(start).Seconds(), r.Probes, map[bool]string{true: "", false: "s"}[r.Probes == 1], r.Nodes)
	if r.Stopped {
		kb.Note += fmt.Sprintf(", stopped by the time limit (--time-limit), its own %s or the node cap", keptLimit)
	}
	if r.Bound <= lower*(1+1e-12) {
		kb.Note = "no higher than the bounds before it (" + kb.Note + ")"
		return nil
	}
	return comboBoundValue(rep, kb, r.Bound, "kept_activations")
}

// comboPartial reports what a stopped exhaustive search proved (oracle.StrictLimitError's
// Bound: nothing it had not settled is faster) as lower_bounds.exhaustive, a global bound
// but not the optimum.
func comboPartial(rep *ComboReport, ex *ComboBound, v float64) error {
	if v <= 0 {
		return nil
	}
	ex.CertifiedBy += ", stopped before its end: a lower bound, not the optimum"
	ex.Note += "; proven so far: the least time + estimate still queued (A*)"
	return comboBoundValue(rep, ex, v, "exhaustive")
}

// keptLimit is the most comboKept gives the kept-activation bound: certify's share for it.
const keptLimit = 10 * time.Second

// comboExhaustive runs the exhaustive search of strict schedules (oracle.Strict: the exact
// optimum of the combined model, global) on chains of at most oracle.MaxStrictStages stages,
// pruned by the fastest verified result, within the time limit: a faster schedule is the
// result "exhaustive", and a search that ends proves its makespan (or the fastest result's)
// optimal: lower_bounds.exhaustive, the ratios' reference.
func comboExhaustive(ctx context.Context, rep *ComboReport, c *instances.Chain, budget int64, beta float64, maxMem int64) error {
	if c.Len() > oracle.MaxStrictStages {
		return nil
	}
	upper := comboUpper(rep)
	ex := &ComboBound{Scope: "global", CertifiedBy: "exhaustive search of every strict schedule of the combined model (oracle.Strict: any 004 sequence, any transfers on the link)"}
	rep.LowerBounds.Exhaustive = ex
	if upper > 0 && upper <= rep.LowerBounds.Best*(1+1e-9) {
		// Nothing left to prove, and on real profiles (no small common tick) the search can
		// pass its configurations where the link credit has proven the result (report's
		// strictSearch).
		ex.Note = "not run: the fastest result meets the " + rep.LowerBounds.BestBy + " bound"
		return nil
	}
	start := time.Now()
	r, err := oracle.Strict(c, budget, beta, oracle.StrictOptions{Upper: upper, MaxNodes: oracle.ToolStrictNodes, MaxNodesFine: oracle.ToolStrictNodesFine,
		MaxMemory: maxMem, Stop: ctx.Done()})
	var limit *oracle.StrictLimitError
	var stopped *oracle.StrictStoppedError
	switch {
	case errors.As(err, &stopped):
		ex.Note = fmt.Sprintf("stopped at the time limit (--time-limit) after %.2f s, %d configurations", time.Since(start).Seconds(), stopped.Nodes)
		return comboPartial(rep, ex, stopped.Bound)
	case errors.As(err, &limit):
		ex.Note = fmt.Sprintf("%s (%.2f s)", limit.Reason(), time.Since(start).Seconds())
		return comboPartial(rep, ex, limit.Bound)
	case err != nil:
		ex.Note = "not run: " + err.Error()
		return nil
	}
	var v float64
	switch {
	case r.Feasible:
		v = r.Report.Makespan
		ms, ratio := v, 1.0
		rep.Results = append(rep.Results, ComboResult{Algo: "exhaustive", Feasible: true, Verified: true, Makespan: &ms, Ratio: &ratio,
			Peak: r.Report.Peak, Idle: r.Report.Idle, Offloaded: r.Report.Offloaded, OffloadedBytes: r.Report.OffloadedBytes,
			Seconds: time.Since(start).Seconds(), Schedule: r.Schedule, Note: "the optimum of the strict combined model (oracle.Strict), validated by verify/combined"})
	case r.NoBetter:
		v = upper
	default:
		ex.Note = "no schedule of the combined model fits"
		return nil
	}
	ex.Value = &v
	ex.Note = fmt.Sprintf("%.2f s, %d configurations: the optimum", time.Since(start).Seconds(), r.Nodes)
	rep.LowerBounds.Best, rep.LowerBounds.BestBy = v, "exhaustive"
	for i := range rep.Results {
		x := &rep.Results[i]
		if !x.Feasible {
			continue
		}
		if *x.Makespan < v*(1-1e-9) {
			return fmt.Errorf("remat-offload: %s's verified makespan %g is below the exhaustive search's optimum %g (bug)", x.Algo, *x.Makespan, v)
		}
		x.Ratio = ratioTo(*x.Makespan, v) // 0 over 0 meets it: no NaN
	}
	return nil
}
