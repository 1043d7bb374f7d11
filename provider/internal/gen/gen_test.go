package gen

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryDo(t *testing.T) {
	unavailable := &Error{Kind: Unavailable}
	tests := []struct {
		name      string
		errs      []error // what each attempt returns; past the end: success
		retries   int
		wantCalls int
		wantWaits []time.Duration
		wantErr   error
	}{
		{name: "success first", retries: 2, wantCalls: 1},
		{name: "unavailable then success", errs: []error{unavailable}, retries: 2, wantCalls: 2, wantWaits: []time.Duration{-1}},
		{name: "retries run out", errs: []error{unavailable, unavailable, unavailable}, retries: 2, wantCalls: 3, wantWaits: []time.Duration{-1, -1}, wantErr: unavailable},
		{name: "rate limited waits what it was told", errs: []error{&Error{Kind: RateLimited, RetryAfter: 3 * time.Second}}, retries: 1, wantCalls: 2, wantWaits: []time.Duration{3 * time.Second}},
		{name: "retry-after beyond MaxDelay stops", errs: []error{&Error{Kind: RateLimited, RetryAfter: time.Hour}}, retries: 2, wantCalls: 1, wantErr: &Error{Kind: RateLimited, RetryAfter: time.Hour}},
		{name: "auth is not retried", errs: []error{&Error{Kind: Auth}}, retries: 2, wantCalls: 1, wantErr: &Error{Kind: Auth}},
		{name: "bad answer is left to the caller", errs: []error{&Error{Kind: BadAnswer}}, retries: 2, wantCalls: 1, wantErr: &Error{Kind: BadAnswer}},
		{name: "foreign errors are not retried", errs: []error{errors.New("boom")}, retries: 2, wantCalls: 1, wantErr: errors.New("boom")},
		{name: "no retries configured", errs: []error{unavailable}, retries: 0, wantCalls: 1, wantErr: unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			r := Retry{MaxRetries: tt.retries, BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second,
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			calls := 0
			_, err := r.Do(context.Background(), func(context.Context) (Answer, error) {
				calls++
				if calls <= len(tt.errs) {
					return Answer{}, tt.errs[calls-1]
				}
				return Answer{Code: "ok"}, nil
			})
			assert.Equal(t, tt.wantCalls, calls)
			if tt.wantErr != nil {
				assert.Equal(t, tt.wantErr, err)
			} else {
				assert.NoError(t, err)
			}
			require.Len(t, waits, len(tt.wantWaits))
			for i, w := range tt.wantWaits {
				if w < 0 { // backoff: within (0, BaseDelay<<i]
					assert.Greater(t, waits[i], time.Duration(0))
					assert.LessOrEqual(t, waits[i], r.BaseDelay<<i)
					continue
				}
				assert.Equal(t, w, waits[i])
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	r := Retry{MaxRetries: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := r.Do(ctx, func(context.Context) (Answer, error) { calls++; return Answer{}, &Error{Kind: Unavailable} })
	assert.Equal(t, 1, calls)
	assert.Equal(t, Unavailable, KindOf(err))
}

// TestRetryNotify: every retry is told to the context's observer, with its number and wait.
func TestRetryNotify(t *testing.T) {
	var seen []RetryEvent
	ctx := WithRetryNotify(context.Background(), func(e RetryEvent) { seen = append(seen, e) })
	r := Retry{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }}
	_, err := r.Do(ctx, func(context.Context) (Answer, error) { return Answer{}, &Error{Kind: Unavailable} })
	require.Error(t, err)
	require.Len(t, seen, 2)
	assert.Equal(t, 1, seen[0].Retry)
	assert.Equal(t, 2, seen[1].Retry)
	assert.Equal(t, 2, seen[1].Of)
	assert.Equal(t, Unavailable, KindOf(seen[0].Err))
	_, _ = r.Do(context.Background(), func(context.Context) (Answer, error) { return Answer{}, &Error{Kind: Unavailable} })
	assert.Len(t, seen, 2, "no observer, no calls")
}

func TestBackoffIsCapped(t *testing.T) {
	r := Retry{BaseDelay: time.Second, MaxDelay: 3 * time.Second}
	for n := range 40 {
		d := r.backoff(n)
		assert.Greater(t, d, time.Duration(0), n)
		assert.LessOrEqual(t, d, 3*time.Second, n)
	}
}

func TestRetryAfter(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		approx bool
	}{
		{name: "none"},
		{name: "seconds", header: map[string]string{"Retry-After": "20"}, want: 20 * time.Second},
		{name: "fractional seconds", header: map[string]string{"Retry-After": "1.5"}, want: 1500 * time.Millisecond},
		{name: "milliseconds win", header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, want: 250 * time.Millisecond},
		{name: "http date", header: map[string]string{"Retry-After": future}, want: 90 * time.Second, approx: true},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}},
		{name: "negative", header: map[string]string{"Retry-After": "-3"}},
		{name: "date in the past", header: map[string]string{"Retry-After": "Mon, 02 Jan 2006 15:04:05 GMT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got := RetryAfter(h)
			if tt.approx {
				assert.InDelta(t, float64(tt.want), float64(got), float64(3*time.Second))
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestKindForStatus(t *testing.T) {
	for status, want := range map[int]ErrorKind{
		400: Misconfigured, 401: Auth, 403: Auth, 404: Misconfigured, 408: Unavailable, 409: Unavailable,
		413: Misconfigured, 422: Misconfigured, 429: RateLimited, 500: Unavailable, 502: Unavailable,
		503: Unavailable, 504: Unavailable, 529: Unavailable,
	} {
		assert.Equal(t, want, KindForStatus(status), status)
	}
}

func TestErrorMessage(t *testing.T) {
	cause := errors.New("dial tcp: connection refused")
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Kind: Unavailable, Provider: "openai", Err: cause}, "provider openai: unavailable: dial tcp: connection refused"},
		{&Error{Kind: RateLimited, Provider: "anthropic", Status: 429, RetryAfter: 2 * time.Second, Message: "slow down"}, "provider anthropic: rate_limited (HTTP 429, retry after 2s): slow down"},
		{&Error{Kind: RateLimited, RetryAfter: time.Second}, "provider: rate_limited (retry after 1s)"},
		{&Error{Kind: Misconfigured, Message: "set FORGE_PROVIDER"}, "provider: config: set FORGE_PROVIDER"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
	}
	assert.ErrorIs(t, tests[0].err, cause)
	assert.Equal(t, ErrorKind(""), KindOf(cause))
	for _, k := range []ErrorKind{Unavailable, RateLimited, BadAnswer, Auth, Misconfigured} {
		assert.True(t, k.Valid())
	}
	assert.False(t, ErrorKind("down").Valid())
	assert.True(t, BadAnswer.Retriable())
	assert.False(t, Auth.Retriable())
	assert.False(t, Misconfigured.Retriable())
}

func TestUsageAdd(t *testing.T) {
	got := Usage{InputTokens: 10, OutputTokens: 2, CachedTokens: 8}.Add(Usage{InputTokens: 5, OutputTokens: 1})
	assert.Equal(t, Usage{InputTokens: 15, OutputTokens: 3, CachedTokens: 8}, got)
}
