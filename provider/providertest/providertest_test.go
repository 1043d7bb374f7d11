package providertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/provider/providertest"
)

func TestFunc(t *testing.T) {
	calls := 0
	var p provider.Provider = providertest.Func(func(_ context.Context, req provider.Request) (provider.Answer, error) {
		calls++
		if req.Attempt == 1 {
			return provider.Answer{}, &provider.Error{Kind: provider.Unavailable}
		}
		return provider.Answer{Code: "package artifact\n"}, nil
	})
	_, err := p.Generate(context.Background(), provider.Request{Attempt: 1})
	assert.Equal(t, provider.Unavailable, provider.KindOf(err))
	a, err := p.Generate(context.Background(), provider.Request{Attempt: 2})
	assert.NoError(t, err)
	assert.Equal(t, "package artifact\n", a.Code)
	assert.Equal(t, 2, calls)
	assert.Equal(t, "func", p.Name())
}
