//go:build highs

package highs

/*
#cgo pkg-config: highs
#include <stdlib.h>
#include "interfaces/highs_c_api.h"

// The interrupt flag lives in C memory: Go sets it when the context is cancelled and the
// callback below, run by HiGHS's threads, reads it. No Go code runs on HiGHS's threads.
static void memsched_interrupt_cb(int type, const char* msg, const HighsCallbackDataOut* out,
                                  HighsCallbackDataIn* in, void* data) {
	if (in != NULL && *(volatile int*)data) {
		in->user_interrupt = 1;
	}
}

static HighsInt memsched_set_interrupt(void* highs, int* flag) {
	HighsInt s = Highs_setCallback(highs, memsched_interrupt_cb, flag);
	if (s == kHighsStatusError) return s;
	s = Highs_startCallback(highs, kHighsCallbackSimplexInterrupt);
	if (s == kHighsStatusError) return s;
	s = Highs_startCallback(highs, kHighsCallbackIpmInterrupt);
	if (s == kHighsStatusError) return s;
	return Highs_startCallback(highs, kHighsCallbackMipInterrupt);
}

static void memsched_raise(int* flag) { *(volatile int*)flag = 1; }

// Constants are static in the header; expose them as functions for cgo.
static HighsInt k_ok(void) { return kHighsStatusOk; }
static HighsInt k_warning(void) { return kHighsStatusWarning; }
static HighsInt k_error(void) { return kHighsStatusError; }
static HighsInt k_rowwise(void) { return kHighsMatrixFormatRowwise; }
static HighsInt k_min(void) { return kHighsObjSenseMinimize; }
static HighsInt k_max(void) { return kHighsObjSenseMaximize; }
static HighsInt k_sol_feasible(void) { return kHighsSolutionStatusFeasible; }
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/memsched/memsched/milp"
	"github.com/memsched/memsched/model"
)

func init() { milp.Register("highs", New) }

// Solver solves models with HiGHS. The zero value is not usable; call New.
type Solver struct{}

// New returns a HiGHS solver.
func New() (milp.Solver, error) { return &Solver{}, nil }

// Name returns "highs".
func (*Solver) Name() string { return "highs" }

// handle owns one native Highs instance. Close frees it; a finalizer is only a backstop.
type handle struct {
	p    unsafe.Pointer
	flag *C.int
}

func newHandle() *handle {
	h := &handle{p: C.Highs_create(), flag: (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))}
	runtime.SetFinalizer(h, (*handle).Close)
	return h
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

// call checks the status of one C call; warnings are not errors.
func call(what string, s C.HighsInt) error {
	if s == C.k_error() {
		return fmt.Errorf("highs: %s failed", what)
	}
	return nil
}

func (h *handle) setOption(name string, v any) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var s C.HighsInt
	switch x := v.(type) {
	case bool:
		b := C.HighsInt(0)
		if x {
			b = 1
		}
		s = C.Highs_setBoolOptionValue(h.p, cname, b)
	case int:
		s = C.Highs_setIntOptionValue(h.p, cname, C.HighsInt(x))
	case float64:
		s = C.Highs_setDoubleOptionValue(h.p, cname, C.double(x))
	case string:
		cv := C.CString(x)
		defer C.free(unsafe.Pointer(cv))
		s = C.Highs_setStringOptionValue(h.p, cname, cv)
	default:
		panic("highs: unsupported option type")
	}
	return call("setting option "+name, s)
}

func (h *handle) doubleInfo(name string) (float64, bool) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var v C.double
	if C.Highs_getDoubleInfoValue(h.p, cname, &v) == C.k_error() {
		return 0, false
	}
	return float64(v), true
}

func (h *handle) intInfo(name string) (int64, bool) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var v C.HighsInt
	if C.Highs_getIntInfoValue(h.p, cname, &v) == C.k_error() {
		return 0, false
	}
	return int64(v), true
}

func (h *handle) int64Info(name string) (int64, bool) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var v C.int64_t
	if C.Highs_getInt64InfoValue(h.p, cname, &v) == C.k_error() {
		return 0, false
	}
	return int64(v), true
}

// Solve passes m to HiGHS as row-wise CSR arrays and runs it under p.
func (s *Solver) Solve(ctx context.Context, m *model.Model, p milp.Params) (*milp.Result, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return &milp.Result{Status: milp.Interrupted, Bound: math.NaN(), Gap: math.Inf(1), Solver: "highs"}, nil
	}
	h := newHandle()
	defer h.Close()
	// Options first: passing the model already logs when output is on.
	logFile, err := configure(h, p)
	if err != nil {
		return nil, err
	}
	inf := float64(C.Highs_getInfinity(h.p))
	if err := pass(h, m, inf); err != nil {
		return nil, err
	}
	if logFile != "" {
		defer os.Remove(logFile)
	}
	if err := call("installing the interrupt callback", C.memsched_set_interrupt(h.p, h.flag)); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			C.memsched_raise(h.flag)
		case <-done:
		}
	}()
	start := time.Now()
	runStatus := C.Highs_run(h.p)
	close(done)
	wall := time.Since(start)
	if logFile != "" && p.Log != nil {
		if f, err := os.Open(logFile); err == nil {
			io.Copy(p.Log, f)
			f.Close()
		}
	}
	res := &milp.Result{Solver: "highs", Wall: wall, Bound: math.NaN(), Gap: math.Inf(1)}
	res.Status = mapStatus(int(C.Highs_getModelStatus(h.p)))
	if runStatus == C.k_error() && res.Status == milp.NotSolved {
		res.Status = milp.SolverError
	}
	if ctx.Err() != nil && res.Status != milp.Optimal {
		res.Status = milp.Interrupted
	}
	if err := collect(h, m, res); err != nil {
		return nil, err
	}
	return res, nil
}

func pass(h *handle, m *model.Model, inf float64) error {
	n, r := m.NumVars(), m.NumRows()
	clamp := func(x float64) float64 {
		switch {
		case math.IsInf(x, 1):
			return inf
		case math.IsInf(x, -1):
			return -inf
		}
		return x
	}
	sense, cost, offset := m.Objective()
	colLo := make([]C.double, n)
	colUp := make([]C.double, n)
	colCost := make([]C.double, n)
	integrality := make([]C.HighsInt, n)
	anyInt := false
	for j := 0; j < n; j++ {
		lb, ub := m.Bounds(model.Var(j))
		colLo[j], colUp[j], colCost[j] = C.double(clamp(lb)), C.double(clamp(ub)), C.double(cost[j])
		if m.VarType(model.Var(j)) != model.Continuous {
			integrality[j] = 1
			anyInt = true
		}
	}
	rowLo := make([]C.double, r)
	rowUp := make([]C.double, r)
	for i := 0; i < r; i++ {
		lo, hi := m.RowBounds(i)
		rowLo[i], rowUp[i] = C.double(clamp(lo)), C.double(clamp(hi))
	}
	start, index, value := m.CSR()
	aStart := make([]C.HighsInt, r+1)
	for i := range aStart {
		aStart[i] = C.HighsInt(start[i])
	}
	nnz := len(index)
	aIndex := make([]C.HighsInt, nnz+1) // +1: never pass a nil pointer for an empty matrix
	aValue := make([]C.double, nnz+1)
	for k := 0; k < nnz; k++ {
		aIndex[k], aValue[k] = C.HighsInt(index[k]), C.double(value[k])
	}
	objSense := C.k_min()
	if sense == model.Maximize {
		objSense = C.k_max()
	}
	// Empty slices still need valid pointers.
	ptrD := func(s []C.double) *C.double {
		if len(s) == 0 {
			return nil
		}
		return &s[0]
	}
	var integ *C.HighsInt
	if anyInt && n > 0 {
		integ = &integrality[0]
	}
	s := C.Highs_passMip(h.p, C.HighsInt(n), C.HighsInt(r), C.HighsInt(nnz), C.k_rowwise(), objSense,
		C.double(offset), ptrD(colCost), ptrD(colLo), ptrD(colUp), ptrD(rowLo), ptrD(rowUp),
		&aStart[0], &aIndex[0], &aValue[0], integ)
	return call("passing the model", s)
}

func configure(h *handle, p milp.Params) (logFile string, err error) {
	set := func(name string, v any) {
		if err == nil {
			err = h.setOption(name, v)
		}
	}
	if p.Log != nil {
		f, ferr := os.CreateTemp("", "memsched-highs-*.log")
		if ferr != nil {
			return "", fmt.Errorf("highs: log file: %w", ferr)
		}
		logFile = f.Name()
		f.Close()
		set("output_flag", true)
		set("log_to_console", false)
		set("log_file", logFile)
	} else {
		set("output_flag", false)
	}
	if p.TimeLimit > 0 {
		set("time_limit", p.TimeLimit.Seconds())
	}
	if p.RelGap > 0 {
		set("mip_rel_gap", p.RelGap)
	}
	if p.Threads > 0 {
		set("threads", p.Threads)
	}
	if p.Seed != 0 {
		set("random_seed", p.Seed)
	}
	if p.FeasTol > 0 {
		set("primal_feasibility_tolerance", p.FeasTol)
		set("dual_feasibility_tolerance", p.FeasTol)
		set("mip_feasibility_tolerance", p.FeasTol)
	}
	if p.NoPresolve {
		set("presolve", "off")
	}
	return logFile, err
}

// collect reads the solution and the MIP information into res.
func collect(h *handle, m *model.Model, res *milp.Result) error {
	n, r := m.NumVars(), m.NumRows()
	if ps, ok := h.intInfo("primal_solution_status"); ok && ps == int64(C.k_sol_feasible()) {
		res.HasSolution = true
	}
	if res.HasSolution {
		col := make([]C.double, n+1)
		colDual := make([]C.double, n+1)
		row := make([]C.double, r+1)
		rowDual := make([]C.double, r+1)
		if err := call("reading the solution", C.Highs_getSolution(h.p, &col[0], &colDual[0], &row[0], &rowDual[0])); err != nil {
			return err
		}
		res.Values = make([]float64, n)
		for j := range res.Values {
			res.Values[j] = float64(col[j])
		}
		res.Objective, _ = h.doubleInfo("objective_function_value")
		if ds, ok := h.intInfo("dual_solution_status"); ok && ds == int64(C.k_sol_feasible()) && !isMIP(m) {
			res.RowDuals = make([]float64, r)
			for i := range res.RowDuals {
				res.RowDuals[i] = float64(rowDual[i])
			}
			res.ColDuals = make([]float64, n)
			for j := range res.ColDuals {
				res.ColDuals[j] = float64(colDual[j])
			}
		}
	}
	mip := isMIP(m)
	if mip {
		if b, ok := h.doubleInfo("mip_dual_bound"); ok && !math.IsNaN(b) {
			res.Bound = b
		}
		if nodes, ok := h.int64Info("mip_node_count"); ok && nodes > 0 {
			res.Nodes = nodes
		}
	} else if res.Status == milp.Optimal {
		// For an LP solved to optimality the optimum is its own bound.
		res.Bound = res.Objective
	}
	inf := float64(C.Highs_getInfinity(h.p))
	if math.Abs(res.Bound) >= inf {
		res.Bound = math.Copysign(math.Inf(1), res.Bound)
	}
	if res.Status == milp.Optimal && math.IsNaN(res.Bound) {
		res.Bound = res.Objective
	}
	res.Gap = milp.RelGap(res.Objective, res.Bound, res.HasSolution)
	return nil
}

// isMIP says whether m has an integer or binary column.
func isMIP(m *model.Model) bool {
	for j := 0; j < m.NumVars(); j++ {
		if m.VarType(model.Var(j)) != model.Continuous {
			return true
		}
	}
	return false
}

// mapStatus maps every kHighsModelStatus* of HiGHS 1.15 (highs_c_api.h) to a milp.Status.
// Unknown future values become SolverError so that nothing is silently trusted.
func mapStatus(s int) milp.Status {
	switch s {
	case 0: // kHighsModelStatusNotset
		return milp.NotSolved
	case 1, 2, 3, 4, 5: // LoadError, ModelError, PresolveError, SolveError, PostsolveError
		return milp.SolverError
	case 6: // ModelEmpty: nothing to optimize; HiGHS reports the (constant) optimum.
		return milp.Optimal
	case 7: // Optimal
		return milp.Optimal
	case 8: // Infeasible
		return milp.Infeasible
	case 9: // UnboundedOrInfeasible
		return milp.InfeasibleOrUnbounded
	case 10: // Unbounded
		return milp.Unbounded
	case 11, 12: // ObjectiveBound, ObjectiveTarget: stopped by a user objective limit
		return milp.IterationLimit
	case 13: // TimeLimit
		return milp.TimeLimit
	case 14: // IterationLimit
		return milp.IterationLimit
	case 15: // Unknown
		return milp.SolverError
	case 16: // SolutionLimit (MIP solution or node limit)
		return milp.IterationLimit
	case 17: // Interrupt
		return milp.Interrupted
	}
	return milp.SolverError
}

// ReadFile reads an LP or MPS file with HiGHS's own reader and returns it as a model, so that
// the files memsched writes can be checked against an independent parser.
func ReadFile(path string) (*model.Model, error) {
	h := newHandle()
	defer h.Close()
	if err := h.setOption("output_flag", false); err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if C.Highs_readModel(h.p, cpath) == C.k_error() {
		return nil, fmt.Errorf("highs: cannot read %s", path)
	}
	var nc, nr, nnz, sense C.HighsInt
	var offset C.double
	if err := call("reading the model size", C.Highs_getLp(h.p, C.k_rowwise(), &nc, &nr, &nnz, &sense, &offset,
		nil, nil, nil, nil, nil, nil, nil, nil, nil)); err != nil {
		return nil, err
	}
	n, r, z := int(nc), int(nr), int(nnz)
	cost := make([]C.double, n+1)
	colLo := make([]C.double, n+1)
	colUp := make([]C.double, n+1)
	rowLo := make([]C.double, r+1)
	rowUp := make([]C.double, r+1)
	aStart := make([]C.HighsInt, r+1)
	aIndex := make([]C.HighsInt, z+1)
	aValue := make([]C.double, z+1)
	integ := make([]C.HighsInt, n+1)
	if err := call("reading the model", C.Highs_getLp(h.p, C.k_rowwise(), &nc, &nr, &nnz, &sense, &offset,
		&cost[0], &colLo[0], &colUp[0], &rowLo[0], &rowUp[0], &aStart[0], &aIndex[0], &aValue[0], &integ[0])); err != nil {
		return nil, err
	}
	inf := float64(C.Highs_getInfinity(h.p))
	unclamp := func(x C.double) float64 {
		v := float64(x)
		switch {
		case v >= inf:
			return math.Inf(1)
		case v <= -inf:
			return math.Inf(-1)
		}
		return v
	}
	m := model.New(path)
	for j := 0; j < n; j++ {
		t := model.Continuous
		if integ[j] == 1 {
			t = model.Integer
		}
		m.AddVar(fmt.Sprintf("c%d", j), t, unclamp(colLo[j]), unclamp(colUp[j]))
	}
	var e model.Expr
	for i := 0; i < r; i++ {
		e.Reset()
		end := z
		if i+1 < r {
			end = int(aStart[i+1])
		}
		for k := int(aStart[i]); k < end; k++ {
			e.Add(model.Var(aIndex[k]), float64(aValue[k]))
		}
		m.AddRow(fmt.Sprintf("r%d", i), unclamp(rowLo[i]), e, unclamp(rowUp[i]))
	}
	e.Reset()
	for j := 0; j < n; j++ {
		e.Add(model.Var(j), float64(cost[j]))
	}
	e.Constant = float64(offset)
	objSense := model.Minimize
	if sense == C.k_max() {
		objSense = model.Maximize
	}
	m.SetObjective(objSense, e)
	if err := m.Err(); err != nil {
		return nil, errors.Join(fmt.Errorf("highs: model read from %s is invalid", path), err)
	}
	return m, nil
}
