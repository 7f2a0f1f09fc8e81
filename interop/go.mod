module github.com/xblgo/fgrl/interop

go 1.26.0

require (
	github.com/df-mc/go-xsapi/v2 v2.0.3
	github.com/google/go-cmp v0.7.0
	github.com/google/uuid v1.6.0
	github.com/xblgo/fgrl v0.0.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-jose/go-jose/v4 v4.1.4 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace github.com/xblgo/fgrl => ../
