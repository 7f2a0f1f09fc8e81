module github.com/xblgo/fgrl

go 1.26

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/google/go-cmp v0.7.0
)
