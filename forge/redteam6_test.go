package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
)

// upperEchoes fails its own call's input by echoing it, as code often does: the acceptance
// examples pass, the leader's call fails with its input in the text.
const upperEchoes = `package artifact

import "strings"

func Upper(s string) string {
	if strings.Contains(s, "secret") {
		panic("cannot upper " + s)
	}
	return strings.ToUpper(s)
}
`

// TestRedteam6GenerationStepsWithholdAnotherClientsFailureText: a generation's steps went to
// every subscriber of the role (forge serve's /v1/events?role=...) with the failure's text, which
// echoes the input of the client whose call led it. A subscriber that is another client reads the
// step without it; the leading client, the operator and a forge without client identities
// (Viewer "") read it whole.
func TestRedteam6GenerationStepsWithholdAnotherClientsFailureText(t *testing.T) {
	p := cassette(t, line{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperEchoes},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperEchoes},
		line{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperEchoes})
	f := openForge(t, t.TempDir(), p)
	require.NoError(t, f.AddRole(textContract()))
	subs := map[string]*Subscription{}
	for _, v := range []string{"", "alice", "bob"} {
		subs[v] = f.Subscribe(Filter{Role: "text", Viewer: v})
		defer subs[v].Close()
	}
	o := f.Call(WithClient(context.Background(), "alice"), "text", "upper", json.RawMessage(`{"s":"alice-secret"}`))
	require.False(t, o.OK)
	require.Contains(t, o.Err.Message, "alice-secret", "the caller reads its own failure")
	steps := func(v string) (msgs []string) {
		for {
			select {
			case e := <-subs[v].C:
				if e.Generation != nil {
					msgs = append(msgs, e.Generation.Step+": "+e.Generation.Message)
				}
			default:
				return msgs
			}
		}
	}
	all, own, other := steps(""), steps("alice"), steps("bob")
	require.NotEmpty(t, all)
	assert.Equal(t, all, own, "the leading client reads its steps whole")
	require.Len(t, other, len(all), "another client gets every step")
	echoed := 0
	for i := range all {
		if assert.NotContains(t, other[i], "alice-secret", "another client's input") && all[i] != other[i] {
			echoed++
			assert.Contains(t, other[i], "withheld", "says the text was withheld")
		}
	}
	assert.Positive(t, echoed, "a step echoed the input: %q", all)
}

// TestRedteam6ArtifactForWithholdsTheFailureReason: the artifact's last failure reason (the text
// of the last failed call, any client's) is withheld from a named client; the class stays.
func TestRedteam6ArtifactForWithholdsTheFailureReason(t *testing.T) {
	for _, tc := range []struct {
		client, want string
	}{{"", "cannot upper \"alice-secret\""}, {"bob", WithheldFailureReason}, {"alice", WithheldFailureReason}} {
		a := ArtifactFor(WithClient(context.Background(), tc.client), &registry.Artifact{LastFailureClass: "intrinsic", LastFailureReason: "cannot upper \"alice-secret\""})
		assert.Equal(t, tc.want, a.LastFailureReason, "client %q", tc.client)
		assert.Equal(t, "intrinsic", a.LastFailureClass)
	}
	assert.Empty(t, FailureReasonFor(WithClient(context.Background(), "bob"), ""), "no failure: nothing said")
}

// notifyCode posts its input to url (a webhook), ignoring what the request did, and answers
// the input in upper case; method GET fetches instead.
func notifyCode(method, mark string) string {
	return `package artifact

import (
	"forge/host"
	"strings"
)

func Notify(url string, s string) string {
	host.Do(host.Request{Method: "` + method + `", URL: url + "?s=" + s})
	return strings.ToUpper(s) // ` + mark + `
}
`
}

// hookContract is role hook, whose notify may reach the server at url.
func hookContract(url string) registry.Contract {
	return registry.Contract{Role: "hook", Purpose: "notify a webhook",
		Methods:      map[string]string{"notify": "func Notify(url string, s string) string"},
		Capabilities: &registry.Capabilities{HTTP: &registry.HTTPCapability{Allow: []string{strings.TrimPrefix(url, "http://")}, Timeout: "5s"}}}
}

// TestRedteam6ReplaysSendNoRequestsAgain: a regeneration or repair replays the sample of real
// calls on the new code, and the code's host HTTP requests went out again, one per sampled input:
// a webhook fired once more per replayed input (up to 256 per repair). A replay now sends only
// GET and HEAD; an input whose run asks for any other method is not judged (neither same nor
// changed: Replay.NotReplayable), even when the code swallows the refusal; GETs replay as before.
func TestRedteam6ReplaysSendNoRequestsAgain(t *testing.T) {
	for _, tc := range []struct{ method, isolation string }{{"POST", ""}, {"GET", ""}, {"POST", "process"}} {
		method := tc.method
		t.Run(method+"/"+tc.isolation, func(t *testing.T) {
			var hits atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			p := cassette(t, line{Role: "hook", Method: "notify", Kind: "generate", Attempt: 1, Code: notifyCode(method, "v1")},
				line{Role: "hook", Method: "notify", Kind: "generate", Attempt: 2, Code: notifyCode(method, "v2")})
			f := openForge(t, t.TempDir(), p, sampleEvery, func(o *Options) { o.MaxProviderCalls = 1 })
			hook := hookContract(srv.URL)
			hook.Limits = &registry.Limits{Isolation: tc.isolation}
			require.NoError(t, f.AddRole(hook))
			inputs := []string{"a", "b", "c"}
			for _, s := range inputs {
				o := f.Call(context.Background(), "hook", "notify", json.RawMessage(fmt.Sprintf(`{"url":%q,"s":%q}`, srv.URL, s)))
				require.True(t, o.OK, "%+v", o.Err)
			}
			f.FlushSample()
			before := hits.Load()
			require.GreaterOrEqual(t, before, int64(len(inputs)), "the calls themselves send")
			art, err := f.Store().Load("hook", "notify")
			require.NoError(t, err)
			n := len(art.Sample)
			require.Positive(t, n)

			o := f.Regenerate(context.Background(), "hook", "notify")
			require.True(t, o.OK, "%+v", o.Err)
			require.NotNil(t, o.Meta.Replay)
			r := o.Meta.Replay
			if method == "GET" {
				assert.Equal(t, n, r.Replayed, "GETs replay and are judged")
				assert.Equal(t, n, r.Same)
				assert.Equal(t, before+int64(n), hits.Load())
				return
			}
			assert.Equal(t, before, hits.Load(), "no webhook fired again by the replay")
			assert.Equal(t, n, r.NotReplayable, "%+v", r)
			assert.Zero(t, r.Replayed, "neither same nor changed")
			assert.Zero(t, r.Changed)
			assert.Contains(t, r.Summary(), fmt.Sprintf("%d not replayable", n))
		})
	}
}

// TestRedteam6ReplayedDelegationsSendNoRequestsAgain: a replayed input's delegated calls run as
// the replay's own run does: a POST below them is not sent, and the input is not judged even
// though the delegating code swallowed the refusal.
func TestRedteam6ReplayedDelegationsSendNoRequestsAgain(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	outer := func(mark string) string {
		return `package artifact

import (
	"forge/host"
	"strings"
)

func Relay(url string, s string) string {
	host.Call("hook", "notify", map[string]string{"url": url, "s": s})
	return strings.ToLower(s) // ` + mark + `
}
`
	}
	p := cassette(t, line{Role: "hook", Method: "notify", Kind: "generate", Attempt: 1, Code: notifyCode("POST", "v1")},
		line{Role: "relay", Method: "relay", Kind: "generate", Attempt: 1, Code: outer("v1")},
		line{Role: "relay", Method: "relay", Kind: "generate", Attempt: 2, Code: outer("v2")})
	f := openForge(t, t.TempDir(), p, sampleEvery, func(o *Options) { o.MaxProviderCalls = 1 })
	require.NoError(t, f.AddRole(hookContract(srv.URL)))
	require.NoError(t, f.AddRole(registry.Contract{Role: "relay", Purpose: "relay to the webhook",
		Methods:      map[string]string{"relay": "func Relay(url string, s string) string"},
		Capabilities: &registry.Capabilities{Call: true}}))
	for _, s := range []string{"A", "B", "C"} {
		o := f.Call(context.Background(), "relay", "relay", json.RawMessage(fmt.Sprintf(`{"url":%q,"s":%q}`, srv.URL, s)))
		require.True(t, o.OK, "%+v", o.Err)
	}
	f.FlushSample()
	art, err := f.Store().Load("relay", "relay")
	require.NoError(t, err)
	n := len(art.Sample)
	require.Positive(t, n)
	before := hits.Load()

	o := f.Regenerate(context.Background(), "relay", "relay")
	require.True(t, o.OK, "%+v", o.Err)
	require.NotNil(t, o.Meta.Replay)
	assert.Equal(t, before, hits.Load(), "no webhook fired again below the replay")
	assert.Equal(t, n, o.Meta.Replay.NotReplayable, "%+v", o.Meta.Replay)
	assert.Zero(t, o.Meta.Replay.Replayed)
}

// gatedProvider holds the first Generate until release is closed, saying so on entered.
type gatedProvider struct {
	provider.Provider
	once             sync.Once
	entered, release chan struct{}
}

func (p *gatedProvider) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	p.once.Do(func() { close(p.entered); <-p.release })
	return p.Provider.Generate(ctx, r)
}

// TestRedteam6AFollowerReadsNoOtherClientsFailureText: concurrent first calls share one
// generation; when it fails, every waiting call answered with the leader's failure, whose text
// echoes the leader's args (the generation verifies the code on them): bob's call read alice's
// input. A call of another client reads the failure's type, class and rule; the leader its text.
func TestRedteam6AFollowerReadsNoOtherClientsFailureText(t *testing.T) {
	lines := []line{{Role: "text", Method: "upper", Kind: "generate", Attempt: 1, Code: upperEchoes},
		{Role: "text", Method: "upper", Kind: "generate", Attempt: 2, Code: upperEchoes},
		{Role: "text", Method: "upper", Kind: "generate", Attempt: 3, Code: upperEchoes}}
	for round := 1; round <= 5; round++ { // until bob's call joins alice's generation
		gp := &gatedProvider{Provider: cassette(t, lines...), entered: make(chan struct{}), release: make(chan struct{})}
		f := openForge(t, t.TempDir(), gp)
		require.NoError(t, f.AddRole(textContract()))
		var alice, bob Outcome
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			alice = f.Call(WithClient(context.Background(), "alice"), "text", "upper", json.RawMessage(`{"s":"alice-secret"}`))
		}()
		<-gp.entered
		go func() {
			defer wg.Done()
			bob = f.Call(WithClient(context.Background(), "bob"), "text", "upper", json.RawMessage(`{"s":"bob-own"}`))
		}()
		time.Sleep(time.Duration(round) * 20 * time.Millisecond) // time for bob's call to wait on the generation (not asserted)
		close(gp.release)
		wg.Wait()
		require.False(t, alice.OK)
		require.Contains(t, alice.Err.Message, "alice-secret", "the leader reads its own failure")
		if bob.Meta.ProviderCalls > 0 {
			continue // bob led a generation of his own: not this case
		}
		require.False(t, bob.OK)
		assert.NotContains(t, bob.Err.Message, "alice-secret", "another client's input")
		assert.Contains(t, bob.Err.Message, "withheld")
		assert.Equal(t, alice.Err.Class, bob.Err.Class)
		assert.Equal(t, alice.Err.Rule, bob.Err.Rule)
		return
	}
	t.Skip("bob's call never joined alice's generation")
}
