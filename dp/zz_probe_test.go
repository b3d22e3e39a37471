package dp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memsched/memsched/heuristics/checkpoint"
	"github.com/memsched/memsched/instances"
	"github.com/memsched/memsched/verify"
)

func TestZZProbe(t *testing.T) {
	files := os.Getenv("PROBE")
	if files == "" {
		t.Skip()
	}
	for _, f := range strings.Split(files, ",") {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := instances.ReadChain(fh, f)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		lo := verify.MinBudget(c)
		all, _ := verify.Remat(c, checkpoint.StoreAll(c), verify.RematOptions{})
		pcts := []int64{25, 50, 75}
		if p := os.Getenv("PCT"); p != "" {
			v, _ := strconv.Atoi(p)
			pcts = []int64{int64(v)}
		}
		for _, p := range pcts {
			b := lo + (all.Peak-lo)*p/100
			t0 := time.Now()
			sl, err := SolvePersistent(c, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ub := sl.Makespan
			if os.Getenv("NOCUT") != "" {
				ub = 0
			}
			t0s := time.Since(t0)
			t0 = time.Now()
			pe, err := NewPersistentExact(c, b, ExactOptions{MaxTotal: 1 << 28, Cutoff: ub})
			if err != nil {
				t.Fatal(err)
			}
			r, err := pe.Solve(b)
			t1 := time.Since(t0)
			t0 = time.Now()
			if ub > 0 {
				ub = r.Makespan
			}
			col, err := pe.Collapsed(ExactOptions{MaxTotal: 1 << 28, Cutoff: ub})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := col.Bound(b)
			t2 := time.Since(t0)
			fmt.Printf("slotted %.2fs ", t0s.Seconds())
			if os.Getenv("FL") != "" {
				t0 = time.Now()
				fe, err := NewFloatingExact(c, b, ExactOptions{MaxTotal: 1 << 28, Cutoff: ub})
				if err != nil {
					fmt.Println(err)
				} else {
					fr, err := fe.Solve(b)
					fmt.Printf("FL exact %.6f ms (%.2fs, %+v) %v ", fr.Makespan*1e3, time.Since(t0).Seconds(), fe.Stats(), err)
				}
			}
			fmt.Printf("%s %d%%: CMP exact %.6f ms (%.2fs, %d bp)  collapsed %.6f ms (%.2fs, %d bp)  ratio %.6f\n", f, p, r.Makespan*1e3, t1.Seconds(), pe.Stats().Breakpoints, v*1e3, t2.Seconds(), col.Stats().Breakpoints, r.Makespan/v)
		}
	}
}
