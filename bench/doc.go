// Package bench holds comparison-only benchmarks: fgrl side by side with peer
// libraries on the same machine and in the same run. It is a separate module
// so that the SDK's go.mod never lists the peers.
package bench
