package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCrashIsNotBadInput: a fatal error memsched cannot catch (here a panic on a goroutine of
// its own, as a DP worker's would be) ends the process with SIGABRT, not with Go's default exit
// status 2, which memsched reserves for bad input. The test re-runs its own binary as the
// crashing process.
func TestCrashIsNotBadInput(t *testing.T) {
	if os.Getenv("MEMSCHED_TEST_CRASH") == "1" {
		setup()
		done := make(chan struct{})
		go func() { panic("memsched test: deliberate crash") }()
		<-done
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashIsNotBadInput$")
	cmd.Env = append(os.Environ(), "MEMSCHED_TEST_CRASH=1", "GOTRACEBACK=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the child must fail: %v\n%s", err, out)
	ws := exit.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled(), "killed by a signal, not exit status %d", ws.ExitStatus())
	assert.Equal(t, syscall.SIGABRT, ws.Signal())
	assert.NotEqual(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), "deliberate crash")
}
