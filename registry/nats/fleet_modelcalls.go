package nats

import (
	"errors"
	"slices"
	"time"

	"github.com/artifactforge/forge/registry"
)

// The fleet's model-call ledger (registry.ModelCallLedger): each client's last spends, in unix
// nanoseconds, under modelCallsPrefix in the metrics bucket. The key has three tokens, so that
// the bulk reads of artifact metrics (ROLE.METHOD, two tokens) never see it; the client is one
// token of its own, escaped after a "c" (the client "" of the calls that name none included).
const modelCallsPrefix = "_forge.modelcalls."

func (f *FleetStore) modelCalls() *Table[[]int64] {
	return NewTable(f.st.MetricsKV, modelCallsPrefix, JSONCodec[[]int64]())
}

// ModelCallsSpent returns client's spends as the fleet recorded them, oldest first.
func (f *FleetStore) ModelCallsSpent(client string) ([]time.Time, error) {
	t := f.modelCalls()
	key, err := t.Key("c" + client)
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	e, err := t.Get(ctx, key)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, f.fail(err)
	}
	out := make([]time.Time, len(e.Value))
	for i, ns := range e.Value {
		out[i] = time.Unix(0, ns)
	}
	return out, nil
}

// SpendModelCall records one spend of client at now (a compare-and-set: concurrent spends of
// the fleet's servers are all kept), in time order, keeping the last keep.
func (f *FleetStore) SpendModelCall(client string, now time.Time, keep int) error {
	t := f.modelCalls()
	key, err := t.Key("c" + client)
	if err != nil {
		return err
	}
	ctx, cancel := f.opCtx()
	defer cancel()
	_, err = t.Update(ctx, key, func(old []int64, _ bool) ([]int64, error) {
		s := append(old, now.UnixNano())
		slices.Sort(s) // servers' clocks and compare-and-sets may append out of order
		return s[max(0, len(s)-keep):], nil
	})
	return f.fail(err)
}

var _ registry.ModelCallLedger = (*FleetStore)(nil)
