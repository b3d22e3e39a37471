package dp

import "time"

// Poll tells a long search when to stop: once Stop is closed or Deadline has passed (a nil
// channel or a zero time: never). A branch and bound asks at every node, so the channel and
// the clock are read only every Every-th call (Every a power of two; 0 or 1: every call).
// Once it has said stop, or after Halt, it keeps saying so.
type Poll struct {
	Stop     <-chan struct{}
	Deadline time.Time
	Every    uint
	calls    uint
	halted   bool
}

// Stopped reports whether the search must stop (reading Stop and the clock on every Every-th
// call only).
func (p *Poll) Stopped() bool {
	if p.halted {
		return true
	}
	p.calls++
	if p.Every > 1 && p.calls&(p.Every-1) != 0 {
		return false
	}
	p.halted = stopped(p.Stop) || passed(p.Deadline)
	return p.halted
}

// StoppedNow is Stopped reading Stop and the clock at this call, whatever Every says: for the
// few long steps around a search, where waiting for the Every-th call would overrun.
func (p *Poll) StoppedNow() bool {
	if !p.halted {
		p.halted = stopped(p.Stop) || passed(p.Deadline)
	}
	return p.halted
}

// Halt stops the search for another reason (a node cap): Stopped says so from now on.
func (p *Poll) Halt() { p.halted = true }

// Halted reports whether Stopped has said stop, or Halt was called, without polling.
func (p *Poll) Halted() bool { return p.halted }
