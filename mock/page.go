package mock

import (
	_ "embed"
	"net/http"
)

// pageHTML is the live page: one file, no external asset; it reads
// /_fgrl/events.
//
//go:embed page.html
var pageHTML []byte

func (h *Handler) servePage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
	w.Write(pageHTML)
}
