package gen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/redact"
)

// MaxResponseBytes bounds the response body an HTTP provider reads: an answer is at most a few
// hundred kilobytes of JSON, so anything larger is a misbehaving server, not an answer.
const MaxResponseBytes = 32 << 20

// Endpoint joins a base URL and an API path the way the model SDKs forge used to depend on did,
// so existing OPENAI_BASE_URL and ANTHROPIC_BASE_URL settings keep addressing the same URL: a
// base path gets a trailing slash, then path is resolved against it ("http://h/v1" +
// "chat/completions" is "http://h/v1/chat/completions"; "https://api.anthropic.com/" +
// "v1/messages" is "https://api.anthropic.com/v1/messages").
func Endpoint(base *url.URL, path string) *url.URL {
	b := *base
	if b.Path != "" && !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
		if b.RawPath != "" {
			b.RawPath += "/"
		}
	}
	ref, err := url.Parse(strings.TrimLeft(path, "/"))
	if err != nil { // path is a constant of the calling provider
		panic(err)
	}
	return b.ResolveReference(ref)
}

// ParseBaseURL checks that raw is an absolute http(s) URL.
func ParseBaseURL(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}

// Response is what one HTTP exchange returned: its status, headers and the whole body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Client is an HTTP provider's client: hc with redirects kept on the endpoint's origin, so a
// credential header (Authorization, x-api-key) never follows a redirect to another host.
func Client(hc *http.Client) *http.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !sameOrigin(req.URL, via[0].URL) {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// PostJSON sends payload as a JSON POST to u with header, bounding the whole exchange (sending,
// waiting and reading the body) by timeout. A failure that produced no complete response is
// an Unavailable *Error keeping its cause (errors.Is(err, context.DeadlineExceeded) holds for a
// timeout); a redirect to another origin is Misconfigured. Any status is returned as is: the
// caller reads its API's error envelope.
func PostJSON(ctx context.Context, name string, hc *http.Client, u *url.URL, header http.Header, payload any, timeout time.Duration) (*Response, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, &Error{Kind: Misconfigured, Provider: name, Message: "could not encode the request", Err: err}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: Misconfigured, Provider: name, Message: "could not build the request", Err: err}
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return nil, TransportError(name, err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		if loc := res.Header.Get("Location"); loc != "" {
			return nil, &Error{Kind: Misconfigured, Provider: name, Status: res.StatusCode,
				Message: fmt.Sprintf("%s redirected to %s; point the base URL at the final address (credentials are not sent to another host)", u.Redacted(), redact.URL(loc))}
		}
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, &Error{Kind: Unavailable, Provider: name, Status: res.StatusCode, Message: "the response was cut off", Err: err}
	}
	if len(data) > MaxResponseBytes {
		return nil, &Error{Kind: BadAnswer, Provider: name, Status: res.StatusCode,
			Message: fmt.Sprintf("the response body is larger than %d MiB", MaxResponseBytes>>20)}
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: data}, nil
}

// DecodeError is the BadAnswer for a successful response whose body is not the API's JSON.
func DecodeError(name string, status int, err error) *Error {
	return &Error{Kind: BadAnswer, Provider: name, Status: status, Message: "could not decode the response body", Err: err}
}
