package cli

import (
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/memsched/memsched/report"
)

// bar shows the progress of a long run on stderr (percent, elapsed, ETA) when stderr is a
// terminal and --quiet is off; otherwise it is silent. It implements report.Progress.
type bar struct {
	mu   sync.Mutex
	pb   *progressbar.ProgressBar // nil: silent
	out  *os.File
	stop chan struct{} // ends the redraw ticker
}

var _ report.Progress = (*bar)(nil)

// interactive reports whether progress should be drawn: stderr is a terminal and not --quiet.
func (o *IO) interactive() (*os.File, bool) {
	f, ok := o.ErrOut.(*os.File)
	if !ok || o.Quiet || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// newBar returns a progress bar for total units (0: unknown, a spinner) described by what.
func newBar(io *IO, what string, total int) *bar {
	f, ok := io.interactive()
	b := &bar{out: f}
	if ok {
		b.pb = b.make(what, total)
		b.stop = make(chan struct{})
		go b.tick()
	}
	return b
}

// tick redraws the bar twice a second, so that elapsed time and the spinner move while a long
// unit of work (a DP table, a MILP solve) runs.
func (b *bar) tick() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			if b.pb != nil {
				b.pb.RenderBlank()
			}
			b.mu.Unlock()
		}
	}
}

func (b *bar) make(what string, total int) *progressbar.ProgressBar {
	max := total
	if max <= 0 {
		max = -1
	}
	return progressbar.NewOptions(max,
		progressbar.OptionSetWriter(b.out),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetSpinnerChangeInterval(200*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
	)
}

// Step starts a new step (report.Progress).
func (b *bar) Step(name string, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.out == nil {
		return
	}
	if b.pb != nil {
		b.pb.Finish()
	}
	b.pb = b.make(name, total)
}

// Advance reports n more units (report.Progress).
func (b *bar) Advance(n int) { b.Add(n) }

// Add reports n more units.
func (b *bar) Add(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb != nil {
		b.pb.Add(n)
	}
}

// MILP shows a solve's incumbent, bound and gap (report.Progress).
func (b *bar) MILP(incumbent, bound, gap float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb == nil {
		return
	}
	show := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "-"
		}
		return fmt.Sprintf("%.6g", x)
	}
	b.pb.Describe(fmt.Sprintf("MILP incumbent %s, bound %s, gap %s", show(incumbent), show(bound), show(gap)))
}

// Done ends the current step (report.Progress); the bar stays for the next Step.
func (b *bar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pb != nil {
		b.pb.Finish()
		b.pb = nil
	}
}

// Finish clears the bar for good.
func (b *bar) Finish() {
	b.Done()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
}
