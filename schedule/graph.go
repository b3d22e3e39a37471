package schedule

// GraphStage is one stage of a Checkmate schedule on a computation graph (SPEC §4): the outputs
// kept from the previous stage (S[t,·]) and the nodes computed in this stage, ascending in the
// graph's topological order (R[t,·]).
type GraphStage struct {
	Keep    []int `json:"keep"`
	Compute []int `json:"compute"`
}

// GraphSchedule is a staged schedule on an instances.Graph. Within a stage an output is freed
// right after its last use in that stage (its own computation or a later node reading it) unless
// the next stage keeps it; an output kept but not used in a stage stays until the stage ends.
type GraphSchedule struct {
	Stages []GraphStage `json:"stages"`
}
