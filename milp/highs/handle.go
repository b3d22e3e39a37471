//go:build highs

package highs

/*
#cgo pkg-config: highs
#include <stdlib.h>
// lanl/highs's raw-model.go includes this header too, and these ten constants are the header's
// only non-static ones: every translation unit that includes it defines them, so this one
// renames them to keep the link free of duplicate definitions.
#define kHighsIisStrategyLight memsched_highs_kHighsIisStrategyLight
#define kHighsIisStrategyFromLpRowPriority memsched_highs_kHighsIisStrategyFromLpRowPriority
#define kHighsIisStrategyFromLpColPriority memsched_highs_kHighsIisStrategyFromLpColPriority
#define kHighsIisBoundFree memsched_highs_kHighsIisBoundFree
#define kHighsIisBoundLower memsched_highs_kHighsIisBoundLower
#define kHighsIisBoundUpper memsched_highs_kHighsIisBoundUpper
#define kHighsIisBoundBoxed memsched_highs_kHighsIisBoundBoxed
#define kHighsIisStatusNotInConflict memsched_highs_kHighsIisStatusNotInConflict
#define kHighsIisStatusMaybeInConflict memsched_highs_kHighsIisStatusMaybeInConflict
#define kHighsIisStatusInConflict memsched_highs_kHighsIisStatusInConflict
#include "interfaces/highs_c_api.h"

// The callback state lives in C memory: Go sets interrupt when the context is cancelled, and
// the callback below, run by HiGHS's threads, reads it and records the MIP's incumbent, dual
// bound and gap (in model units) for Go to poll. No Go code runs on HiGHS's threads.
typedef struct {
	int interrupt;
	int mip_seen;
	double primal, dual, gap;
} memsched_cb_state;

static void memsched_interrupt_cb(int type, const char* msg, const HighsCallbackDataOut* out,
                                  HighsCallbackDataIn* in, void* data) {
	volatile memsched_cb_state* st = (volatile memsched_cb_state*)data;
	if (type == kHighsCallbackMipInterrupt && out != NULL) {
		st->primal = out->mip_primal_bound;
		st->dual = out->mip_dual_bound;
		st->gap = out->mip_gap;
		st->mip_seen = 1;
	}
	if (in != NULL && st->interrupt) {
		in->user_interrupt = 1;
	}
}

static HighsInt memsched_set_interrupt(void* highs, memsched_cb_state* st) {
	HighsInt s = Highs_setCallback(highs, memsched_interrupt_cb, st);
	if (s == kHighsStatusError) return s;
	s = Highs_startCallback(highs, kHighsCallbackSimplexInterrupt);
	if (s == kHighsStatusError) return s;
	s = Highs_startCallback(highs, kHighsCallbackIpmInterrupt);
	if (s == kHighsStatusError) return s;
	return Highs_startCallback(highs, kHighsCallbackMipInterrupt);
}

static void memsched_raise(memsched_cb_state* st) { ((volatile memsched_cb_state*)st)->interrupt = 1; }

// memsched_mip reads the last MIP progress the callback recorded; 0 when none yet.
static int memsched_mip(memsched_cb_state* st, double* primal, double* dual, double* gap) {
	volatile memsched_cb_state* v = (volatile memsched_cb_state*)st;
	if (!v->mip_seen) return 0;
	*primal = v->primal;
	*dual = v->dual;
	*gap = v->gap;
	return 1;
}

// The header's constants are static; these read them in this translation unit.
static HighsInt k_error(void) { return kHighsStatusError; }
static HighsInt k_rowwise(void) { return kHighsMatrixFormatRowwise; }
static HighsInt k_max(void) { return kHighsObjSenseMaximize; }
static HighsInt k_sol_feasible(void) { return kHighsSolutionStatusFeasible; }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"time"
	"unsafe"

	"github.com/lanl/highs"

	// Defines, with external linkage, the HiGHS constants lanl/highs links against.
	_ "github.com/memsched/memsched/milp/highs/internal/highsconst"
)

// handle is one HiGHS instance: a lanl/highs RawModel, which makes the instance and offers
// options, model building, infos and file input/output by name, plus the few C calls it lacks
// (below, each with the reason), made on the same native instance.
type handle struct {
	raw  *highs.RawModel
	p    unsafe.Pointer       // the native instance inside raw
	flag *C.memsched_cb_state // the callback's state (interrupt flag, MIP progress), in C memory
}

// newHandle makes a HiGHS instance with its output off (it logs as soon as a model is passed
// otherwise).
func newHandle() (*handle, error) {
	raw := highs.NewRawModel()
	h := &handle{raw: raw, p: nativeOf(raw), flag: (*C.memsched_cb_state)(C.calloc(1, C.size_t(unsafe.Sizeof(C.memsched_cb_state{}))))}
	// lanl/highs frees the instance only from a finalizer and has no Close; memsched frees it
	// deterministically (big models hold much native memory the Go collector cannot see), so
	// its finalizer is replaced by ours.
	runtime.SetFinalizer(raw, nil)
	runtime.SetFinalizer(h, (*handle).Close)
	if err := h.check("setting output_flag", h.raw.SetBoolOption("output_flag", false)); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// Close frees the native instance; it is safe to call twice.
func (h *handle) Close() {
	if h.p != nil {
		C.Highs_destroy(h.p)
		h.p = nil
	}
	if h.flag != nil {
		C.free(unsafe.Pointer(h.flag))
		h.flag = nil
	}
	runtime.SetFinalizer(h, nil)
}

// nativeOf returns the Highs instance a lanl/highs RawModel wraps. v1.0.0 keeps it in the
// unexported field obj with no accessor, and memsched needs it for the calls lanl/highs lacks
// (interrupt callback, run, model status, solution arrays, reading the model back). The field
// is looked up by name and type, so a version that changes it panics here, in a test, rather
// than corrupting memory.
func nativeOf(raw *highs.RawModel) unsafe.Pointer {
	f := reflect.ValueOf(raw).Elem().FieldByName("obj")
	if !f.IsValid() || f.Kind() != reflect.UnsafePointer {
		panic("highs: lanl/highs.RawModel has no field obj of type unsafe.Pointer; update milp/highs for this version")
	}
	return f.UnsafePointer()
}

// infos returns a lanl/highs RawSolution bound to h's instance, for its info getters by name.
// lanl/highs makes one only in RawModel.Solve, which memsched cannot use (see run), and keeps
// its instance in the unexported field obj, so it is set by name and type as in nativeOf.
func (h *handle) infos() *highs.RawSolution {
	s := &highs.RawSolution{}
	f := reflect.ValueOf(s).Elem().FieldByName("obj")
	if !f.IsValid() || f.Kind() != reflect.UnsafePointer {
		panic("highs: lanl/highs.RawSolution has no field obj of type unsafe.Pointer; update milp/highs for this version")
	}
	*(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr())) = h.p
	return s
}

// check turns a lanl/highs call status into an error; HiGHS's warnings are not errors.
func (h *handle) check(what string, err error) error {
	var cs highs.CallStatus
	if err == nil || (errors.As(err, &cs) && cs.IsWarning()) {
		return nil
	}
	return fmt.Errorf("highs: %s: %w", what, err)
}

// setOption sets a HiGHS option by name through lanl/highs.
func (h *handle) setOption(name string, v any) error {
	var err error
	switch x := v.(type) {
	case bool:
		err = h.raw.SetBoolOption(name, x)
	case int:
		err = h.raw.SetIntOption(name, x)
	case float64:
		err = h.raw.SetFloat64Option(name, x)
	case string:
		err = h.raw.SetStringOption(name, x)
	default:
		panic("highs: unsupported option type")
	}
	return h.check("setting option "+name, err)
}

// intInfo, int64Info and doubleInfo read a HiGHS info value by name through lanl/highs.
func (h *handle) intInfo(name string) (int64, bool) {
	v, err := h.infos().GetIntInfo(name)
	return int64(v), h.check(name, err) == nil
}

func (h *handle) int64Info(name string) (int64, bool) {
	v, err := h.infos().GetInt64Info(name)
	return v, h.check(name, err) == nil
}

func (h *handle) doubleInfo(name string) (float64, bool) {
	v, err := h.infos().GetFloat64Info(name)
	return v, h.check(name, err) == nil
}

// call checks the status of one of memsched's own C calls; warnings are not errors.
func call(what string, s C.HighsInt) error {
	if s == C.k_error() {
		return fmt.Errorf("highs: %s failed", what)
	}
	return nil
}

// addRowsWithoutEntries appends rows that have no matrix entries. lanl/highs's
// AddCompSparseRows takes &index[0] and so panics when there are none.
func (h *handle) addRowsWithoutEntries(lo, up []float64) error {
	if len(lo) == 0 {
		return nil
	}
	return call("adding rows", C.Highs_addRows(h.p, C.HighsInt(len(lo)), (*C.double)(&lo[0]), (*C.double)(&up[0]), 0, nil, nil, nil))
}

// run solves under ctx: cancelling it interrupts HiGHS through its interrupt callbacks. It
// returns whether Highs_run returned an error. lanl/highs's RawModel.Solve cannot serve: it
// installs no callback, discards the instance's results whenever Highs_run returns a warning
// (as it does on a time limit or an interrupt), and indexes the solution arrays of a model
// without rows or columns out of range.
//
// progress, when not nil, is called from a Go goroutine (never a HiGHS thread) every
// progressEvery while a MIP runs, with the incumbent, dual bound and gap in model units, when
// they changed since the last call.
//
// Lifetime of the callback state: h owns h.flag and frees it in Close. The watcher goroutine
// that raises the interrupt flag and polls the progress is joined before run returns, so no Go
// code touches the flag after run: without the join, a watcher scheduled late could find both
// ctx.Done() (the caller's deferred cancel) and done ready, pick the first, and write to the
// flag after Close freed it (issue 18: a SIGSEGV at the end of about 1 run in 15 of certify on
// tiny chains). After run, no progress call is made either.
//
// grace bounds the wait once ctx has ended: HiGHS reads its interrupt flag and its clock only
// between the steps of some phases (a presolve pass, the MIP's setup after presolve: seconds
// each on a 700 000-nonzero model under load), so a run can go on well past its time limit.
// When Highs_run has not returned grace after ctx ended, run abandons it: it returns
// abandoned = true at once, and h then belongs to the goroutine still in Highs_run, which
// closes it when HiGHS returns (at its next poll of the raised flag) — the caller must not
// touch or close h. Nothing of that run is read.
func (h *handle) run(ctx context.Context, progress func(incumbent, bound, gap float64), grace time.Duration) (failed, abandoned bool, err error) {
	flag := h.flag
	if err := call("installing the interrupt callback", C.memsched_set_interrupt(h.p, flag)); err != nil {
		return false, false, err
	}
	done := make(chan struct{}) // closed when Highs_run returned
	var status C.HighsInt
	go func() {
		status = C.Highs_run(h.p)
		close(done)
	}()
	var tick <-chan time.Time
	if progress != nil {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		tick = t.C
	}
	var last [3]float64
	ended := ctx.Done()
	var giveUp <-chan time.Time
	for {
		select {
		case <-done:
			return status == C.k_error(), false, nil
		case <-ended:
			C.memsched_raise(flag)
			ended, tick = nil, nil // nothing left to watch but done and the grace
			t := time.NewTimer(grace)
			defer t.Stop()
			giveUp = t.C
		case <-giveUp:
			go func() {
				<-done
				h.Close()
			}()
			return false, true, nil
		case <-tick:
			var pr, du, gp C.double
			if C.memsched_mip(flag, &pr, &du, &gp) == 0 {
				continue
			}
			if cur := [3]float64{float64(pr), float64(du), float64(gp)}; cur != last {
				last = cur
				progress(cur[0], cur[1], cur[2])
			}
		}
	}
}

// abandonGrace is how long run waits for HiGHS after the context ended before it abandons the
// run: a twentieth of the time the solve was given, between 0.3 s and 2 s, so that a command
// ends within 5 % + 0.3 s of its --time-limit whatever phase HiGHS is in.
func abandonGrace(given time.Duration) time.Duration {
	return min(max(given/20, 300*time.Millisecond), 2*time.Second)
}

// progressEvery is how often run polls the MIP's progress for Params.Progress.
const progressEvery = 200 * time.Millisecond

// modelStatus is HiGHS's kHighsModelStatus after a run. lanl/highs maps only statuses 0–15 (to
// its own enumeration, and only inside RawModel.Solve); HiGHS 1.15 has 18.
func (h *handle) modelStatus() int { return int(C.Highs_getModelStatus(h.p)) }

// kSolutionFeasible is kHighsSolutionStatusFeasible, the value of the infos
// primal_solution_status and dual_solution_status when a solution is feasible.
func kSolutionFeasible() int { return int(C.k_sol_feasible()) }

// infinity is HiGHS's infinite bound.
func (h *handle) infinity() float64 { return float64(C.Highs_getInfinity(h.p)) }

// solution returns the column values and reduced costs and the row duals of the last run.
// lanl/highs fills them only inside RawModel.Solve.
func (h *handle) solution(n, r int) (col, colDual, rowDual []float64, err error) {
	col, colDual = make([]float64, n+1), make([]float64, n+1) // +1: never a nil pointer
	row, rowDual := make([]float64, r+1), make([]float64, r+1)
	if err := call("reading the solution", C.Highs_getSolution(h.p, (*C.double)(&col[0]), (*C.double)(&colDual[0]),
		(*C.double)(&row[0]), (*C.double)(&rowDual[0]))); err != nil {
		return nil, nil, nil, err
	}
	return col[:n], colDual[:n], rowDual[:r], nil
}

// setSolution passes a start point (column values only) to HiGHS (Highs_setSolution, HiGHS ≥
// 1.7): for a MIP it becomes the first incumbent when it is feasible. lanl/highs has no call
// for it.
func (h *handle) setSolution(col []float64) error {
	if len(col) == 0 {
		return nil
	}
	return call("setting the start point", C.Highs_setSolution(h.p, (*C.double)(&col[0]), nil, nil, nil))
}

// lp is a model as HiGHS holds it, row-wise.
type lp struct {
	maximize           bool
	offset             float64
	cost, colLo, colUp []float64
	rowLo, rowUp       []float64
	start              []int // r+1 entries
	index              []int32
	value              []float64
	integer            []bool
}

// getLP reads the instance's model back. lanl/highs can read a file into an instance
// (RawModel.ReadModelFromFile) but offers no way to get the model out.
func (h *handle) getLP() (*lp, error) {
	var nc, nr, nnz, sense C.HighsInt
	var offset C.double
	if err := call("reading the model size", C.Highs_getLp(h.p, C.k_rowwise(), &nc, &nr, &nnz, &sense, &offset,
		nil, nil, nil, nil, nil, nil, nil, nil, nil)); err != nil {
		return nil, err
	}
	n, r, z := int(nc), int(nr), int(nnz)
	cost, colLo, colUp := make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	rowLo, rowUp := make([]float64, r+1), make([]float64, r+1)
	start := make([]C.HighsInt, r+1)
	index := make([]C.HighsInt, z+1)
	value := make([]float64, z+1)
	integ := make([]C.HighsInt, n+1)
	if err := call("reading the model", C.Highs_getLp(h.p, C.k_rowwise(), &nc, &nr, &nnz, &sense, &offset,
		(*C.double)(&cost[0]), (*C.double)(&colLo[0]), (*C.double)(&colUp[0]), (*C.double)(&rowLo[0]), (*C.double)(&rowUp[0]),
		&start[0], &index[0], (*C.double)(&value[0]), &integ[0])); err != nil {
		return nil, err
	}
	inf := h.infinity()
	unclamp := func(xs []float64) []float64 {
		for i, v := range xs {
			switch {
			case v >= inf:
				xs[i] = math.Inf(1)
			case v <= -inf:
				xs[i] = math.Inf(-1)
			}
		}
		return xs
	}
	out := &lp{maximize: sense == C.k_max(), offset: float64(offset), cost: cost[:n],
		colLo: unclamp(colLo[:n]), colUp: unclamp(colUp[:n]), rowLo: unclamp(rowLo[:r]), rowUp: unclamp(rowUp[:r]),
		start: make([]int, r+1), index: make([]int32, z), value: value[:z], integer: make([]bool, n)}
	for i := 0; i < r; i++ {
		out.start[i] = int(start[i])
	}
	out.start[r] = z
	for k := range out.index {
		out.index[k] = int32(index[k])
	}
	for j := range out.integer {
		out.integer[j] = integ[j] == 1
	}
	return out, nil
}
