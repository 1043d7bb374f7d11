module example.com/embedder

go 1.26.0

require github.com/artifactforge/forge v0.0.0

require (
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/traefik/yaegi v0.16.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

replace github.com/artifactforge/forge => ../../../..
