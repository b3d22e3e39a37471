package cli

// bar is a progress indicator; step 3 replaces the silent one with a terminal bar.
type bar interface {
	Add(n int)
	Finish()
}

type silentBar struct{}

func (silentBar) Add(int) {}
func (silentBar) Finish() {}

func newBar(io *IO, what string, total int) bar { return silentBar{} }
