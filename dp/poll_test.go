package dp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPoll: a closed channel or a past deadline stops it at the next polled call (every
// Every-th), for good; Halt stops it at once; neither set never stops.
func TestPoll(t *testing.T) {
	never := Poll{Every: 4}
	for range 100 {
		assert.False(t, never.Stopped())
	}
	ch := make(chan struct{})
	p := Poll{Stop: ch, Every: 4}
	assert.False(t, p.Stopped()) // call 1
	close(ch)
	assert.False(t, p.Stopped()) // calls 2, 3: not polled
	assert.False(t, p.Stopped())
	assert.True(t, p.Stopped()) // call 4 polls
	assert.True(t, p.Halted())
	assert.True(t, p.Stopped())
	d := Poll{Deadline: time.Now().Add(-time.Second)}
	assert.True(t, d.Stopped(), "Every 0 polls every call")
	ch2 := make(chan struct{})
	n := Poll{Stop: ch2, Every: 256}
	assert.False(t, n.StoppedNow())
	close(ch2)
	assert.True(t, n.StoppedNow(), "StoppedNow reads the channel whatever Every says")
	assert.True(t, n.Stopped())
	assert.True(t, (&Poll{Deadline: time.Now().Add(-time.Second), Every: 256}).StoppedNow())
	h := Poll{Every: 256}
	h.Halt()
	assert.True(t, h.Stopped())
	assert.True(t, h.Halted())
}
