package milp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDeadlineParams(t *testing.T) {
	p, ok := DeadlineParams(context.Background(), Params{TimeLimit: time.Hour})
	assert.True(t, ok)
	assert.Equal(t, time.Hour, p.TimeLimit, "no deadline: unchanged")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, ok = DeadlineParams(ctx, Params{TimeLimit: time.Hour})
	assert.True(t, ok)
	assert.LessOrEqual(t, p.TimeLimit, time.Minute)
	assert.Greater(t, p.TimeLimit, 50*time.Second)
	p, _ = DeadlineParams(ctx, Params{})
	assert.LessOrEqual(t, p.TimeLimit, time.Minute, "no limit: the time left")
	p, _ = DeadlineParams(ctx, Params{TimeLimit: time.Second})
	assert.Equal(t, time.Second, p.TimeLimit, "a shorter limit stays")

	past, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	_, ok = DeadlineParams(past, Params{})
	assert.False(t, ok)
	assert.Equal(t, TimeLimit, StoppedStatus(past))
	cc, cancel3 := context.WithCancel(context.Background())
	cancel3()
	assert.Equal(t, Interrupted, StoppedStatus(cc))
}
