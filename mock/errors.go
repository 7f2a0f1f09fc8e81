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
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		return h[:i]
	}
	return h
}
