module github.com/acp-agent/acp-agent

go 1.26.5

require (
	github.com/coder/acp-go-sdk v0.13.5
	github.com/google/uuid v1.6.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	github.com/sourcegraph/jsonrpc2 v0.2.3
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	mvdan.cc/sh/v3 v3.14.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
