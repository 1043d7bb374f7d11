package registry

import "time"

// ModelCallLedger is a store's own record of the model calls each client spent, shared by every
// forge that opens the store: with it, a client's bound on model calls (forge.ModelCallLimit)
// holds across a fleet of servers on one store instead of once per process. A backend offers it
// optionally (the fleet store does); without it each forge counts in its own process.
type ModelCallLedger interface {
	// ModelCallsSpent returns when client's recorded model calls were spent, oldest first.
	ModelCallsSpent(client string) ([]time.Time, error)
	// SpendModelCall records one model call of client at now, keeping only its last keep (the
	// only ones a bound of keep calls ever reads).
	SpendModelCall(client string, now time.Time, keep int) error
}
