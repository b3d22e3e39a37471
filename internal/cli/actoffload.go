package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memsched/memsched/dp"
	hact "github.com/memsched/memsched/heuristics/actoffload"
	"github.com/memsched/memsched/instances"
	act "github.com/memsched/memsched/instances/actoffload"
	"github.com/memsched/memsched/instances/reduce"
	leveract "github.com/memsched/memsched/lever/actoffload"
	"github.com/memsched/memsched/schedule"
)

// ActOptions are the flags of `memsched offload-act` (and `bound --problem act-offload`).
type ActOptions struct {
	WeightsOptions
	Algo  string
	Slots int
	Exact bool
	// MaxNodes bounds the exact search.
	MaxNodes int
}

// actAlgos are the strategies of the registry (lever/actoffload): --algo names one of them.
var actAlgos = leveract.Names(0)

func (o *ActOptions) problem() (*act.Problem, error) {
	if o.ChainFile == "" || o.Mem == "" {
		return nil, usageErrorf("--chain and --mem are required")
	}
	mem, err := sizeFlag("--mem", o.Mem)
	if err != nil {
		return nil, err
	}
	beta, err := rateFlag("--bandwidth", o.Bandwidth)
	if err != nil {
		return nil, err
	}
	if o.Slots < 0 {
		return nil, usageErrorf("--slots: %d must be positive", o.Slots)
	}
	c, err := instances.LoadChain(o.ChainFile)
	if err != nil {
		return nil, &UsageError{err}
	}
	p, err := act.FromChain(c, mem, beta)
	if err != nil {
		return nil, &UsageError{err}
	}
	return p, nil
}

// infJSON is a float64 written as null in JSON when infinite (no schedule exists).
type infJSON float64

// MarshalJSON writes null for ±Inf.
func (x infJSON) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// UnmarshalJSON reads null as +Inf.
func (x *infJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = infJSON(math.Inf(1))
		return nil
	}
	return json.Unmarshal(b, (*float64)(x))
}

// ActBounds are the certified lower bounds, weakest first (SPEC §2, §5); null (+Inf) when
// even the relaxation has no schedule.
type ActBounds struct {
	Prop3         infJSON  `json:"prop3"`
	Fractional    infJSON  `json:"fractional"`
	Interruptible infJSON  `json:"interruptible"`
	Exact         *float64 `json:"exact,omitempty"`
	// Best is the largest; CertifiedBy says what certifies each.
	Best        infJSON           `json:"best"`
	CertifiedBy map[string]string `json:"certified_by"`
}

// ActResult is one algorithm's validated schedule.
type ActResult struct {
	Algo       string          `json:"algo"`
	Feasible   bool            `json:"feasible"`
	Makespan   *float64        `json:"makespan"`
	PeakMemory int64           `json:"peak_memory"`
	Idle       float64         `json:"idle"`
	LinkUtil   float64         `json:"link_utilisation"`
	Ratio      *float64        `json:"ratio_to_best_bound"`
	Offloaded  []int           `json:"offloaded"`
	Bytes      int64           `json:"offloaded_bytes"`
	Schedule   *schedule.Timed `json:"schedule,omitempty"`
	Verified   bool            `json:"verified"`
	Status     string          `json:"status,omitempty"`
}

// ActReport is the output of `memsched offload-act`: the chosen (or, for all, the best)
// algorithm's result at the top level, every result in Results.
type ActReport struct {
	ActResult
	L           int         `json:"L"`
	MGPU        int64       `json:"m_gpu"`
	MPeak       int64       `json:"m_peak"`
	MinMemory   int64       `json:"min_memory"`
	Beta        float64     `json:"bandwidth"`
	Compute     float64     `json:"compute"`
	LowerBounds ActBounds   `json:"lower_bounds"`
	Results     []ActResult `json:"results,omitempty"`
}

func (o *ActOptions) dpOptions() dp.ActOptions {
	return dp.ActOptions{Slots: o.Slots, Exact: o.Exact}
}

// actBounds computes the certified bounds; exact, when given, is an optimal exact result.
func actBounds(p *act.Problem, o *ActOptions, exact *hact.Result) (ActBounds, error) {
	b := ActBounds{Prop3: infJSON(p.Prop3()), Fractional: infJSON(p.Fractional()), CertifiedBy: map[string]string{
		"prop3":         "001 Prop. 3 (factor 2): all compute, and M_peak − M_GPU bytes out and back on one link",
		"fractional":    "optimum of the fluid fractional relaxation (001 §4, Thm 2), a relaxation of Problem 1",
		"interruptible": "DYNPROG optimum with sizes rounded down: a relaxation of Problem 2 (interruptible transfers, 001 §5), max with fractional",
	}}
	ib, err := dp.InterruptibleBound(p, o.dpOptions())
	if err != nil {
		return b, err
	}
	b.Interruptible = infJSON(ib)
	b.Best = infJSON(math.Max(p.Prop3(), math.Max(p.Fractional(), ib)))
	if exact != nil && exact.Feasible {
		v := exact.Report.Makespan
		b.Exact = &v
		b.Best = infJSON(math.Max(float64(b.Best), v))
		b.CertifiedBy["exact"] = "exhaustive branch and bound over offload sets and link orders (no-wait schedules)"
	}
	return b, nil
}

func runActAlgo(p *act.Problem, o *ActOptions, algo string) (*hact.Result, string, error) {
	st, ok := leveract.Lookup(algo)
	if !ok {
		return nil, "", usageErrorf("--algo: unknown %q (want %s or all)", algo, strings.Join(actAlgos, ", "))
	}
	out, err := st.Run(p, leveract.Options{DP: o.dpOptions(), LowerBound: p.Fractional(), MaxNodes: o.MaxNodes})
	return out.Result, out.Status, err
}

func actResult(algo string, r *hact.Result, status string, best float64) ActResult {
	a := ActResult{Algo: algo, Feasible: r.Feasible, Status: status, Offloaded: r.Offloaded}
	if a.Offloaded == nil {
		a.Offloaded = []int{}
	}
	if r.Feasible {
		m := r.Report.Makespan
		a.Makespan, a.PeakMemory, a.Idle, a.LinkUtil = &m, r.Report.Peak, r.Report.Idle, r.Report.Utilisation
		a.Bytes, a.Schedule, a.Verified = r.Report.OffloadedBytes, r.Schedule, true
		if best > 0 && !math.IsInf(best, 0) {
			ratio := m / best
			a.Ratio = &ratio
		}
	}
	return a
}

// RunOffloadAct runs the algorithms and assembles the report.
func RunOffloadAct(p *act.Problem, o *ActOptions) (*ActReport, error) {
	algos := []string{o.Algo}
	if o.Algo == "all" {
		algos = leveract.Names(leveract.InAll)
	}
	type run struct {
		algo, status string
		r            *hact.Result
	}
	var runs []run
	var exact *hact.Result
	for _, a := range algos {
		r, st, err := runActAlgo(p, o, a)
		if err != nil {
			return nil, err
		}
		if a == "exact" && st == hact.Optimal.String() {
			exact = r
		}
		runs = append(runs, run{a, st, r})
	}
	b, err := actBounds(p, o, exact)
	if err != nil {
		return nil, err
	}
	rep := &ActReport{L: p.L(), MGPU: p.MGPU, MPeak: p.Peak(), MinMemory: p.MinMemory(), Beta: p.Beta,
		Compute: p.Compute(), LowerBounds: b}
	bestIdx := -1
	for i, r := range runs {
		res := actResult(r.algo, r.r, r.status, float64(b.Best))
		// Nothing a search says stands against a verified schedule (SPEC §5).
		if res.Feasible && *res.Makespan < float64(b.Best)*(1-1e-9) {
			return nil, fmt.Errorf("offload-act: %s's verified makespan %g is below the certified bound %g (bug)", r.algo, *res.Makespan, b.Best)
		}
		rep.Results = append(rep.Results, res)
		if res.Feasible && (bestIdx < 0 || *res.Makespan < *rep.Results[bestIdx].Makespan) {
			bestIdx = i
		}
	}
	if bestIdx < 0 {
		bestIdx = 0
	}
	rep.ActResult = rep.Results[bestIdx]
	if len(runs) == 1 {
		rep.Results = nil
	}
	return rep, nil
}

func fmtTime(x float64) string {
	if math.IsInf(x, 1) {
		return "infeasible"
	}
	return instances.FormatDuration(x)
}

func printActBounds(w *tabwriter.Writer, b ActBounds) {
	fmt.Fprintf(w, "bound prop3\t%s\t%s\n", fmtTime(float64(b.Prop3)), b.CertifiedBy["prop3"])
	fmt.Fprintf(w, "bound fractional\t%s\t%s\n", fmtTime(float64(b.Fractional)), b.CertifiedBy["fractional"])
	fmt.Fprintf(w, "bound interruptible\t%s\t%s\n", fmtTime(float64(b.Interruptible)), b.CertifiedBy["interruptible"])
	if b.Exact != nil {
		fmt.Fprintf(w, "optimum (exact)\t%s\t%s\n", fmtTime(*b.Exact), b.CertifiedBy["exact"])
	}
}

// actAlgoHelp lists offload-act's algorithms for its help: the registry's strategies and all.
func actAlgoHelp() string {
	var es []helpEntry
	for _, st := range leveract.Strategies {
		es = append(es, helpEntry{st.Name, st.Summary})
	}
	return strategyHelp(append(es, helpEntry{"all", strings.Join(leveract.Names(leveract.InAll), ", ") + " in one table"}))
}

func newOffloadActCmd(io *IO) *cobra.Command {
	o := &ActOptions{}
	cmd := &cobra.Command{
		Use:   "offload-act --chain FILE --mem SIZE --bandwidth RATE --algo greedy|dynprog|vdnn|exact|all [--slots N|--exact]",
		Short: "Activation offloading (001): a validated schedule and the certified bounds",
		Long: `offload-act maps the chain to 001's model (x_0 = a^0, x_i = ā^i, y_i = δ^i, ex = o_f/o_b) and
builds a schedule with GREEDY (001 §4.2), DYNPROG (001 §5.3), VDNN (001 §6.1) or the exact search
(small chains), validated by verify/timed, next to the certified bounds
LB (Prop. 3) ≤ OPT_frac ≤ OPT_interruptible ≤ OPT ≤ every schedule (docs/act-offload.md).
Algorithms:
` + actAlgoHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Algo != "all" && !contains(actAlgos, o.Algo) {
				return usageErrorf("--algo: unknown %q (want %s or all)", o.Algo, strings.Join(actAlgos, ", "))
			}
			p, err := o.problem()
			if err != nil {
				return err
			}
			rep, err := RunOffloadAct(p, o)
			if err != nil {
				return err
			}
			if io.JSON {
				return io.PrintJSON(rep)
			}
			w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "chain\tL = %d, M_GPU %s, M_peak %s, min %s, β %.4g B/s, compute %s\n", rep.L,
				instances.FormatSize(rep.MGPU), instances.FormatSize(rep.MPeak), instances.FormatSize(rep.MinMemory), rep.Beta, fmtTime(rep.Compute))
			printActBounds(w, rep.LowerBounds)
			results := rep.Results
			if results == nil {
				results = []ActResult{rep.ActResult}
			}
			fmt.Fprintln(w, "algorithm\tmakespan\tratio\toffloaded\tpeak\tverified")
			for _, r := range results {
				if !r.Feasible {
					fmt.Fprintf(w, "%s\tinfeasible\t-\t-\t-\t-\n", r.Algo)
					continue
				}
				ratio := "-"
				if r.Ratio != nil {
					ratio = fmt.Sprintf("%.4f", *r.Ratio)
				}
				name := r.Algo
				if r.Status != "" {
					name += " (" + r.Status + ")"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d (%s)\t%s\t%v\n", name, fmtTime(*r.Makespan), ratio, len(r.Offloaded),
					instances.FormatSize(r.Bytes), instances.FormatSize(r.PeakMemory), r.Verified)
			}
			return w.Flush()
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&o.Algo, "algo", "all", strings.Join(actAlgos, "|")+"|all")
	cmd.Flags().IntVar(&o.Slots, "slots", dp.DefaultSlots, "DYNPROG memory slots S (001 §5.3.2)")
	cmd.Flags().BoolVar(&o.Exact, "exact", false, "DYNPROG without rounding (slots of gcd of the sizes; small integer instances)")
	cmd.Flags().IntVar(&o.MaxNodes, "max-nodes", 2_000_000, "node limit of the exact search")
	return cmd
}

// runActBound is `memsched bound --problem act-offload`: the bounds alone (no exact search).
func runActBound(io *IO, w *WeightsOptions, slots int, exact bool) error {
	o := &ActOptions{WeightsOptions: *w, Slots: slots, Exact: exact}
	p, err := o.problem()
	if err != nil {
		return err
	}
	b, err := actBounds(p, o, nil)
	if err != nil {
		return err
	}
	if io.JSON {
		return io.PrintJSON(struct {
			Problem     string    `json:"problem"`
			LowerBound  infJSON   `json:"lower_bound"`
			LowerBounds ActBounds `json:"lower_bounds"`
		}{"act-offload", b.Best, b})
	}
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "problem\tact-offload (L = %d, M_GPU %s, M_peak %s)\n", p.L(), instances.FormatSize(p.MGPU), instances.FormatSize(p.Peak()))
	printActBounds(tw, b)
	fmt.Fprintf(tw, "lower bound\t%s\n", fmtTime(float64(b.Best)))
	return tw.Flush()
}

// writeActInstance writes a reduction instance as a chain in bytes and seconds and prints
// M_GPU, β and the target on stderr.
func writeActInstance(io *IO, g *GenOptions, p *act.Problem, target float64, name string) error {
	c := p.ToChain(fmt.Sprintf("%s M_GPU=%dB beta=%gB/s T=%gs", name, p.MGPU, p.Beta, target))
	fmt.Fprintf(io.ErrOut, "memsched: %s: M_GPU = %d B (--mem %dB), β = %g B/s (--bandwidth %gB/s), T = %g s\n",
		name, p.MGPU, p.MGPU, p.Beta, p.Beta, target)
	return writeChain(c, g, io)
}

func newGenActCmds(io *IO, g *GenOptions) []*cobra.Command {
	var v3, v2 []int64
	three := &cobra.Command{
		Use:   "act-3partition --values 6,7,6,7,6,8",
		Short: "001 Thm 1: the activation-offloading instance of a 3-partition instance (M_GPU = mV, β = V, T = 2m)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, target, err := reduce.ActThreePartition(v3)
			if err != nil {
				return &UsageError{err}
			}
			return writeActInstance(io, g, p, target, "act 3-partition")
		},
	}
	three.Flags().Int64SliceVar(&v3, "values", nil, "3m positive integers with a sum divisible by m")
	two := &cobra.Command{
		Use:   "act-2partition --values 3,1,1,2,2,1",
		Short: "001 Thm 3: the interruptible activation-offloading instance of a 2-partition instance (M_GPU = 2V, β = V, T = 2)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, target, err := reduce.ActTwoPartition(v2)
			if err != nil {
				return &UsageError{err}
			}
			return writeActInstance(io, g, p, target, "act 2-partition")
		},
	}
	two.Flags().Int64SliceVar(&v2, "values", nil, "positive integers with an even sum")
	return []*cobra.Command{three, two}
}
