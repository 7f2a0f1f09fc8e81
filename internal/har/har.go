// Package har writes HTTP Archive (HAR 1.2) traces, the format browsers,
// Fiddler and proxies export, one entry at a time, for xblcall simulate
// --har and the mock's record of the calls it saw; analyze.ReadHAR reads
// them. It never writes a secret: tokens, codes, tickets and the sign-in
// services' bodies are redacted (xblauth).
package har

// The wire format, as much of HAR 1.2 as is written here.
type (
	rawEntry struct {
		StartedDateTime string      `json:"startedDateTime"`
		Time            float64     `json:"time"`
		Request         rawRequest  `json:"request"`
		Response        rawResponse `json:"response"`
		Cache           struct{}    `json:"cache"`
		Timings         timings     `json:"timings"`
		// WebSocketMessages are a websocket's messages, as Chrome's HAR
		// export writes them.
		WebSocketMessages []wsMessage `json:"_webSocketMessages,omitempty"`
	}
	wsMessage struct {
		Type   string  `json:"type"`   // "send" (by the client) or "receive"
		Time   float64 `json:"time"`   // seconds since the Unix epoch
		Opcode int     `json:"opcode"` // 1: text
		Data   string  `json:"data"`
	}
	rawRequest struct {
		Method      string    `json:"method"`
		URL         string    `json:"url"`
		HTTPVersion string    `json:"httpVersion"`
		Headers     []header  `json:"headers"`
		QueryString []header  `json:"queryString"`
		Cookies     []header  `json:"cookies"`
		PostData    *postData `json:"postData,omitempty"`
		HeadersSize int       `json:"headersSize"`
		BodySize    int       `json:"bodySize"`
	}
	postData struct {
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	rawResponse struct {
		Status      int      `json:"status"`
		StatusText  string   `json:"statusText"`
		HTTPVersion string   `json:"httpVersion"`
		Headers     []header `json:"headers"`
		Cookies     []header `json:"cookies"`
		Content     content  `json:"content"`
		RedirectURL string   `json:"redirectURL"`
		HeadersSize int      `json:"headersSize"`
		BodySize    int      `json:"bodySize"`
	}
	header struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	content struct {
		Size     int    `json:"size"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text,omitempty"`
	}
	timings struct {
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	}
)
