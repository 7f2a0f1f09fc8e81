package mock

import (
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

// WSMessage is one message of a websocket the mock served (the RTA
// service's), as its call in the journal keeps it and its HAR export writes
// it (_webSocketMessages, as Chrome's HAR does).
type WSMessage struct {
	// Type is "send" for a message the client sent, "receive" for one the
	// mock sent it (the client's point of view, as in a browser's HAR).
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Data is the message's text, cut to 1 KiB. The token is sent once,
	// in the upgrade's Authorization, which the journal never keeps; a
	// client's message is kept as the mock read it (a subscribe to a
	// resource it knows, an unsubscribe), any other by its size, so that
	// no text a client wrote into one reaches the record.
	Data string `json:"data"`
}

// Bounds of a call's messages: the first maxCallMessages, their data
// cut to maxWSData bytes each and maxCallBody in all; the rest are
// counted (Call.MoreMessages).
const (
	maxCallMessages = 100
	maxWSData       = 1 << 10
)

// wsRecord is the messages of one websocket kept so far.
type wsRecord struct {
	msgs  []WSMessage
	bytes int
	more  int
}

// add keeps one message, or counts it when the record is full.
func (r *wsRecord) add(typ string, at time.Time, b []byte) {
	data := safetext.Cut(string(b), maxWSData)
	if len(r.msgs) >= maxCallMessages || r.bytes+len(data) > maxCallBody {
		r.more++
		return
	}
	r.msgs = append(r.msgs, WSMessage{Type: typ, Time: at.UTC(), Data: data})
	r.bytes += len(data)
}

// note records one message of c.
func (c *rtaConn) note(typ string, b []byte) {
	c.mu.Lock()
	c.rec.add(typ, c.hub.w.now(), b)
	c.mu.Unlock()
}
