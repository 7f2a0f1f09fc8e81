package mock

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/coder/websocket"
)

// pipeServer serves h on in-memory connections until the test ends, and
// returns the client that reaches it.
func pipeServer(t *testing.T, h *Handler) *http.Client {
	t.Helper()
	l := newPipeListener()
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return l.dial(), nil }}
	t.Cleanup(func() {
		h.rta.dropAll()
		srv.Close()
		tr.CloseIdleConnections()
	})
	return &http.Client{Transport: tr}
}

// dialRTA opens an RTA websocket as xuid, or fails the test.
func dialRTA(t *testing.T, hc *http.Client, xuid string) *websocket.Conn {
	t.Helper()
	ws, resp, err := websocket.Dial(t.Context(), "ws://"+RTAHost+RTAPath, &websocket.DialOptions{HTTPClient: hc,
		Subprotocols: []string{RTASubprotocol}, HTTPHeader: http.Header{"Authorization": {Token(xuid, title1)}}})
	if err != nil {
		t.Fatalf("dial RTA as %s: %v (%v)", xuid, err, resp)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}
