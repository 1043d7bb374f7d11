package forge

import (
	"fmt"
	"sync"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/registry"
)

// ModelCallLimit bounds the model calls each client's calls may spend: a caller that calls a
// method no code exists for yet, or makes code fail until it is repaired, makes the forge ask the
// model, and every such call costs the operator money and time. With the bound, a client that
// spent N model calls within the last Per gets a caller error (classifier.RuleModelCalls; HTTP
// 429 with Retry-After) instead of new code, until its oldest counted call is Per old; code that
// exists keeps answering it as before. Clients are named by WithClient (forge serve's client
// identities); the calls that name none share the client "". Operator actions (regen, repair
// forced from the CLI, the console or the admin verbs) are not counted.
//
// The check is made before a call asks for new code and holds one model call for it until its
// generation asks the model (or the call ends without leading one): generations under way count,
// so concurrent first calls cannot all pass. Every model call of the generation it leads is then
// counted (up to Options.MaxProviderCalls for one generation), so a client may end up to
// MaxProviderCalls-1 calls over N for each generation under way at once (at most N of them). A client over its bound is refused new code even for a
// method whose generation another client is leading at that moment.
type ModelCallLimit struct {
	// Default is every client's bound (zero: none, the library's default; `forge serve` sets
	// DefaultServeModelCalls).
	Default ModelCallBound
	// Clients overrides Default for the named clients (a zero bound there: none for that client).
	Clients map[string]ModelCallBound
}

// ModelCallBound is N model calls per Per.
type ModelCallBound struct {
	// N is the model calls a client may spend per Per; 0: no bound.
	N int
	// Per is the window (0: DefaultModelCallWindow).
	Per time.Duration
}

// DefaultModelCallWindow is ModelCallBound.Per when it is zero.
const DefaultModelCallWindow = time.Hour

// DefaultServeModelCalls is the bound `forge serve` sets for each client when its operator sets
// none (--model-calls): generous for an agent that defines and calls its tools, and a ceiling on
// what a caller that invents method names (or makes code fail to have it repaired) can spend.
var DefaultServeModelCalls = ModelCallBound{N: 100, Per: time.Hour}

// maxTrackedClients bounds the clients the model-call ledger remembers: a program that names a
// client per request must not grow it without end. Past it, clients whose window is empty are
// dropped first; if none is, the ledger starts over (each client's count is lost, which only ever
// lets a client spend more, never blocks one wrongly).
const maxTrackedClients = 10_000

// modelCalls is the per-client ledger of model calls spent within the window.
type modelCalls struct {
	limit ModelCallLimit
	// shared is the store's ledger, when its backend keeps one (registry.ModelCallLedger): the
	// spends of every forge on the store decide, so a fleet of N servers does not allow N times
	// the bound. spent still counts this process's, which decide when the store cannot answer.
	shared registry.ModelCallLedger
	mu     sync.Mutex
	spent  map[string][]time.Time // oldest first, at most the client's N kept
	held   map[string]int         // model calls held by checked calls that have not asked yet
}

func newModelCalls(l ModelCallLimit, shared registry.ModelCallLedger) *modelCalls {
	return &modelCalls{limit: l, shared: shared, spent: map[string][]time.Time{}, held: map[string]int{}}
}

// bound is client's bound (N 0: none), its window set.
func (m *modelCalls) bound(client string) (int, time.Duration) {
	b, ok := m.limit.Clients[client]
	if !ok {
		b = m.limit.Default
	}
	if b.Per <= 0 {
		b.Per = DefaultModelCallWindow
	}
	return b.N, b.Per
}

// modelCallsLeft decides whether a client that spent model calls at the times in spent (oldest
// first), and holds held more for generations under way, may ask for new code at now under a
// bound of n calls per per: it returns the spends still inside the window and, when none is left,
// when the oldest that must leave it does (a held call counts as spent now).
func modelCallsLeft(spent []time.Time, now time.Time, n, held int, per time.Duration) (inWindow []time.Time, ok bool, retryAt time.Time) {
	cut := 0
	for cut < len(spent) && !spent[cut].After(now.Add(-per)) {
		cut++
	}
	inWindow = spent[cut:]
	if n <= 0 || len(inWindow)+held < n {
		return inWindow, true, time.Time{}
	}
	if i := len(inWindow) + held - n; i < len(inWindow) {
		return inWindow, false, inWindow[i].Add(per)
	}
	return inWindow, false, now.Add(per)
}

// allow reports whether client may ask for new code now, and when not, the failure to answer.
// When it may and has a bound, one model call is held for it (held): the caller passes held to
// the spend of its first model call, or to unhold if it makes none.
func (m *modelCalls) allow(client string, now time.Time) (fl *failure, held bool) {
	n, per := m.bound(client)
	if n <= 0 {
		return nil, false
	}
	var fleet []time.Time
	shared := false
	if m.shared != nil {
		var err error
		fleet, err = m.shared.ModelCallsSpent(client) // a model call follows: one read is cheap
		shared = err == nil
	}
	m.mu.Lock()
	underWay := m.held[client] > 0
	in, ok, retryAt := modelCallsLeft(m.spent[client], now, n, m.held[client], per)
	if len(in) == 0 {
		delete(m.spent, client)
	} else {
		m.spent[client] = in
	}
	if shared { // the fleet's spends, this process's among them, decide
		_, ok, retryAt = modelCallsLeft(fleet, now, n, m.held[client], per)
	}
	if ok {
		m.held[client]++
	}
	m.mu.Unlock()
	if ok {
		return nil, true
	}
	who := "client " + client
	if client == "" {
		who = "the calls that name no client"
	}
	spent := "spent its"
	if underWay {
		spent = "spent or is spending (generations under way) its"
	}
	wait := max(retryAt.Sub(now).Round(time.Second), time.Second)
	return &failure{typ: TypeModelCalls, result: classifier.Classify(classifier.Failure{Kind: classifier.KindModelCalls}),
		retryAfter: wait,
		msg: fmt.Sprintf("%s %s %d model calls of the last %s: no new code is written for it for %s (code that exists still answers); "+
			"call again then, or ask the operator to raise the bound (forge serve --model-calls, or model_calls in the clients file)", who, spent, n, per, wait)}, false
}

// unhold releases a model call allow held for client that no model call used.
func (m *modelCalls) unhold(client string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unholdLocked(client)
}

func (m *modelCalls) unholdLocked(client string) {
	if m.held[client] <= 1 {
		delete(m.held, client)
	} else {
		m.held[client]--
	}
}

// spend counts one model call for client at now; held: the call allow held for it.
func (m *modelCalls) spend(client string, now time.Time, held bool) {
	n, _ := m.bound(client)
	if n <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if held {
		m.unholdLocked(client)
	}
	if _, known := m.spent[client]; !known && len(m.spent) >= maxTrackedClients {
		for c, s := range m.spent {
			if _, per := m.bound(c); len(s) == 0 || !s[len(s)-1].After(now.Add(-per)) {
				delete(m.spent, c)
			}
		}
		if len(m.spent) >= maxTrackedClients {
			clear(m.spent)
		}
	}
	s := append(m.spent[client], now)
	if len(s) > n { // only the last n spends ever decide
		s = append(s[:0], s[len(s)-n:]...)
	}
	m.spent[client] = s
}

// spendShared records a model call spend counted in the store's ledger too (outside m.mu: it is
// a round trip). Not recorded there (the store unreachable), it counts in this process only.
func (m *modelCalls) spendShared(client string, now time.Time, held bool) {
	m.spend(client, now, held)
	if n, _ := m.bound(client); n > 0 && m.shared != nil {
		_ = m.shared.SpendModelCall(client, now, n)
	}
}
