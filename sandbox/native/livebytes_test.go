package native

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/sandboxtest"
)

// TestLiveBytesCountsTheImageOnce: the sealed memfd a program's workers are exec'd from is memory
// the program holds. Two clients' programs of one code share it: it counts once in the sum of
// their LiveBytes, and still once when the program that counted it closes.
func TestLiveBytesCountsTheImageOnce(t *testing.T) {
	sb, err := New(Options{CacheDir: sandboxtest.BuildCacheDir(), IdleTimeout: -1})
	require.NoError(t, err)
	defer sb.Close()
	ctx := context.Background()
	src := sandbox.Source{Code: "package artifact\n\nfunc Add(a, b int) int { return a + b }\n", Client: "a"}
	a, err := sb.Compile(ctx, src)
	require.NoError(t, err)
	defer a.Close()
	src.Client = "b"
	b, err := sb.Compile(ctx, src)
	require.NoError(t, err)
	defer b.Close()
	pa, pb := a.(*Program), b.(*Program)
	require.NotSame(t, pa, pb, "a program per client")
	require.Same(t, pa.img, pb.img, "one image for one code")
	workers := func(p *Program) int64 {
		sb.mu.Lock()
		defer sb.mu.Unlock()
		n := int64(0)
		for _, pl := range p.pools {
			n += int64(pl.count) * (p.size + 4<<20)
		}
		return n
	}
	img := pa.img.size
	require.Positive(t, img)
	assert.Equal(t, img+workers(pa)+workers(pb), pa.LiveBytes()+pb.LiveBytes(), "the image counts, once")
	require.NoError(t, a.Close())
	assert.Equal(t, img+workers(pb), pb.LiveBytes(), "the image still counts once its first counter closed")
}
