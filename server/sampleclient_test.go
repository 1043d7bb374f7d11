package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call over HTTP offers its input to the sample under the client whose token it carried, so
// that no single client decides the replay's threshold (forge.ShadowPolicy).
func TestSampleRemembersTheClient(t *testing.T) {
	f := openForge(t, t.TempDir())
	_, ts := newTestServer(t, f, Options{AdminToken: "s3cret", Clients: testClients(t)})
	for _, s := range []string{"a", "b"} { // the first call writes the code: not sampled
		resp, body := post(t, ts.URL+"/v1/call/text/upper", aliceToken, `{"s":"`+s+`"}`)
		require.Equal(t, 200, resp.StatusCode, "%s", body)
	}
	f.FlushSample()
	art, err := f.Store().Load("text", "upper")
	require.NoError(t, err)
	require.Len(t, art.Sample, 1)
	assert.Equal(t, "alice", art.Sample[0].Client)
}
