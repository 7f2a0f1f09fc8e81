package mock

import (
	"encoding/json"
	"net/http"
	"strings"
)

// errorBody is the JSON error answer, in the shape Xbox services use.
type errorBody struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

func writeError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, errorBody{Code: code, Description: desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"InternalError","description":"encoding failed"}`)
	}
	writeRaw(w, status, b)
}

// jsonType is the Content-Type of every JSON answer, shared rather than
// built per answer (net/http only reads it; an Add would copy it, as its
// capacity is its length).
var jsonType = []string{"application/json; charset=utf-8"}

// writeRaw answers a JSON document already encoded.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(b)
}

func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		return h[:i]
	}
	return h
}
