package repair

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultMaxRepairsBeforeRegen bounds a repair chain: after three repairs since the last
// regeneration the next failure regenerates from the contract instead of patching a patch.
const DefaultMaxRepairsBeforeRegen = 3

// Budget is how many repairs an artifact may get between two regenerations. The zero value is
// the default budget; build another with NewBudget or ParseBudget.
type Budget struct {
	max      int
	explicit bool
}

// NewBudget returns a budget of maxRepairs repairs per regeneration. 0 is valid: every failure that
// the code can fix regenerates it.
func NewBudget(maxRepairs int) (Budget, error) {
	if maxRepairs < 0 {
		return Budget{}, fmt.Errorf("repair: budget %d: want 0 or more repairs before regeneration", maxRepairs)
	}
	return Budget{max: maxRepairs, explicit: true}, nil
}

// ParseBudget reads a budget as configured (MAX_REPAIRS_BEFORE_REGEN); empty means the default.
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Budget{}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return Budget{}, fmt.Errorf("repair: budget %q: want a whole number of repairs before regeneration", s)
	}
	return NewBudget(n)
}

// Max is the number of repairs allowed between two regenerations.
func (b Budget) Max() int {
	if !b.explicit {
		return DefaultMaxRepairsBeforeRegen
	}
	return b.max
}

// Remaining is how many repairs are left after used repairs since the last regeneration; it is
// what selector.Input.RepairsLeft expects.
func (b Budget) Remaining(used int) int { return max(b.Max()-max(used, 0), 0) }

// Exhausted reports whether no repair is left, so the next fix must be a regeneration.
func (b Budget) Exhausted(used int) bool { return b.Remaining(used) == 0 }

// String renders the budget as it is configured: the number of repairs.
func (b Budget) String() string { return strconv.Itoa(b.Max()) }

// NextRepairCount is the artifact's repair_count_since_regen after a new generation made for t:
// a repair spends one, anything that writes code from the contract or restores a proven
// generation (initial forge, regeneration, operator regen or rollback) resets the budget, and an
// operator verb that does not change the code (bless, quarantine, prune) leaves it as it was.
func NextRepairCount(t Trigger, used int) int {
	used = max(used, 0)
	switch t.Kind {
	case TriggerRepair:
		return used + 1
	case TriggerInitialForge, TriggerRegenerate:
		return 0
	case TriggerOperator:
		if t.Verb == VerbRegen || t.Verb == VerbRollback || t.Verb == VerbEdit {
			return 0
		}
	}
	return used
}
