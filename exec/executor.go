package exec

import "fmt"

// Executor says how an advised query's join (later) steps read the
// partitions the rows of the earlier steps probe. The plan, the rows read
// and the answer are the same either way; only the number of store round
// trips differs, which is what the benchmark compares it for (seed 000's
// Fig. 4 was measured on NoSE's Cassandra executor, which issued one
// request per partition).
type Executor uint8

const (
	// Batched reads every partition a later step probes in one store
	// request (a skip scan over their key prefixes): a step is one round
	// trip, whatever the number of partitions. The default.
	Batched Executor = iota
	// PerPartition reads each partition a later step probes with a store
	// request of its own, one after another, as NoSE's Cassandra executor
	// ran a join step: a step probing N partitions is N round trips. The
	// first step of a plan is read as with Batched.
	PerPartition
)

// String is the executor's name as the command line spells it: batched or
// per-partition.
func (x Executor) String() string {
	switch x {
	case Batched:
		return "batched"
	case PerPartition:
		return "per-partition"
	}
	return fmt.Sprintf("Executor(%d)", uint8(x))
}

// ParseExecutor reads an executor's name (Executor.String); empty is
// Batched.
func ParseExecutor(s string) (Executor, error) {
	switch s {
	case "", "batched":
		return Batched, nil
	case "per-partition":
		return PerPartition, nil
	}
	return 0, fmt.Errorf("unknown executor %q (batched or per-partition)", s)
}

// SetExecutor makes e run the join steps of advised queries, support
// queries of writes included, with x (Batched by default). Statements
// compile it in: call it before e prepares any (an engine per executor,
// as the benchmark builds them).
func (e *Engine) SetExecutor(x Executor) { e.executor = x }

// Executor returns how e runs join steps (SetExecutor).
func (e *Engine) Executor() Executor { return e.executor }
