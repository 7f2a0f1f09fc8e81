module github.com/xblgo/fgrl/pagetest

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/xblgo/fgrl v0.0.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

replace github.com/xblgo/fgrl => ../
