package dp

import (
	"errors"
	"fmt"
	"time"

	"github.com/memsched/memsched/instances"
)

// Resource guards. Every table is sized before it is allocated (the estimate functions sit
// next to the tables they size: PersistentBytes, FloatingBytes, exactFixedBytes, and the
// breakpoint and state budgets of the exact tables and DYNPROG), and a table above the memory
// limit is refused with a *TooLargeError naming its size and what to do instead — never an
// allocation the runtime aborts on ("fatal error: out of memory"). And a table can be stopped
// midway: its fill checks the options' Stop channel between rows and returns ErrStopped.

// DefaultMaxMemory is the memory limit of a table whose options give none: 2 GiB (the
// default of the CLI's --max-memory).
const DefaultMaxMemory int64 = 2 << 30

// ErrStopped says that a fill was stopped (its options' Stop channel was closed: a deadline or
// Ctrl-C) before the table was complete.
var ErrStopped = errors.New("dp: stopped before the table was complete")

// TooLargeError says that a table would take more memory than the limit allows.
type TooLargeError struct {
	// Table names it, e.g. "C_MP (persistent) with 500 slots on 10002 stages".
	Table string
	// Bytes is its estimated size, Limit the limit.
	Bytes, Limit int64
	// Hint says what to do instead.
	Hint string
	// AtLeast: the table was stopped as it grew, at Bytes (it would take more).
	AtLeast bool
	// Slots is the most slots (of the caller's --slots) with which the table would fit the
	// limit, when Hint names it (a slotted table; 0 when even one slot is too many).
	Slots   int
	slotted bool
}

// WithOther returns a copy of e whose hint names other as what to use instead (an
// algorithm of the caller's command: a lever's strategies are not remat's), keeping the
// slots that fit; e itself when it is not a slotted table's.
func (e *TooLargeError) WithOther(other string) *TooLargeError {
	if !e.slotted {
		return e
	}
	c := *e
	c.Hint = slotsHint(e.Slots, other)
	return &c
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("dp: the %s table would take %s, above the memory limit of %s (--max-memory)",
		e.Table, fmtBytes(e.Bytes), fmtBytes(e.Limit))
	if e.AtLeast {
		msg = fmt.Sprintf("dp: the %s took more than %s as it grew, above the memory limit of %s (--max-memory); stopped",
			e.Table, fmtBytes(e.Limit), fmtBytes(e.Limit))
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// fmtBytes writes a size for messages (sizes past int64 saturate).
func fmtBytes(b int64) string { return instances.FormatSize(b) }

// CheckTable refuses a table of entries entries of entryBytes bytes each above limit (0:
// DefaultMaxMemory) with a *TooLargeError naming it (table) and what to do instead (hint);
// nil when it fits. For the tables sized by a count of entries (the pipeline planners' L²
// parts).
func CheckTable(table string, entries, entryBytes, limit int64, hint string) error {
	limit = memoryLimit(limit)
	b, ok := instances.MulBytes(entries, entryBytes)
	if !ok {
		b = instances.MaxBytes
	}
	if !ok || b > limit {
		return &TooLargeError{Table: table, Bytes: b, Limit: limit, Hint: hint}
	}
	return nil
}

// memoryLimit returns the limit a table works under: limit, or DefaultMaxMemory when 0.
func memoryLimit(limit int64) int64 {
	if limit <= 0 {
		return DefaultMaxMemory
	}
	return limit
}

// stopped reports whether stop is closed (never for a nil channel).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// deadlineStop returns a channel closed at deadline, for the Stop option of a table built
// under a Deadline, and the function that releases its timer.
func deadlineStop(deadline time.Time) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	if !time.Now().Before(deadline) {
		close(ch) // already: no race with a timer firing on another goroutine
		return ch, func() {}
	}
	t := time.AfterFunc(time.Until(deadline), func() { close(ch) })
	return ch, func() { t.Stop() }
}

// passed reports whether deadline is set and has passed.
func passed(deadline time.Time) bool { return !deadline.IsZero() && !time.Now().Before(deadline) }

// satMul multiplies non-negative sizes, saturating at the largest int64 instead of wrapping
// (a table of 10⁴ stages and 10⁵ slots has 10¹³ cells).
func satMul(xs ...float64) int64 {
	p := 1.0
	for _, x := range xs {
		p *= x
	}
	if p >= 9.2e18 {
		return 1<<63 - 1
	}
	return int64(p)
}

// minUsefulSlots is the fewest slots worth suggesting: below it the rounding of the sizes to
// slots leaves a table that finds little or nothing (a 1000-block GPT-2 is infeasible with 8
// slots at 16 GiB and needs 32).
const minUsefulSlots = 16

// slotsHint says how many slots fit the limit (k from slotsWithin), or that no useful number
// does, and what else to do.
func slotsHint(k int, other string) string {
	if k < minUsefulSlots {
		return fmt.Sprintf("fewer than %d slots would fit: use %s or raise --max-memory", minUsefulSlots, other)
	}
	return fmt.Sprintf("use --slots %d or fewer, %s, or raise --max-memory", k, other)
}

// slotsName names a slotted table's discretization for messages.
func slotsName(opt Options) string {
	switch {
	case opt.Exact:
		return "1-byte slots"
	case opt.Slots == 0:
		return fmt.Sprintf("%d slots", DefaultSlots)
	}
	return fmt.Sprintf("%d slots", opt.Slots)
}

// slotsWithin returns the most slots in [1, slots] whose table, sized by bytes, is at most
// limit, or 0 when even one slot is above it. bytes must grow with the slots.
func slotsWithin(slots int, limit int64, bytes func(slots int) int64) int {
	if bytes(1) > limit {
		return 0
	}
	lo, hi := 1, slots
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if bytes(mid) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// PersistentSlotsWithin returns the most slots (at most slots) with which the C_MP table of n
// stages (NewPersistent, NewRevolve) stays within limit bytes, 0 when none does: for callers
// that fall back to fewer slots rather than refuse.
func PersistentSlotsWithin(n, slots int, limit int64) int {
	return slotsWithin(slots, limit, func(s int) int64 { return PersistentBytes(n, s) })
}

// FloatingSlotsWithin is PersistentSlotsWithin for the C_FL table (NewFloating).
func FloatingSlotsWithin(n, slots int, limit int64) int {
	return slotsWithin(slots, limit, func(s int) int64 { return FloatingBytes(n, s) })
}
