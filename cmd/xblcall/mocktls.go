package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/tunnel"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/tlsca"
)

// ca returns the CA of the mock's TLS: the one --ca-cert and --ca-key name,
// or a new one, whose key never leaves the process.
func (o *mockOpts) ca() (*tlsca.CA, error) {
	switch {
	case o.caCert == "" && o.caKey == "":
		return tlsca.New()
	case o.caCert == "" || o.caKey == "":
		return nil, &exitError{2, errors.New("--ca-cert and --ca-key go together")}
	}
	ca, err := tlsca.Load(o.caCert, o.caKey)
	if err != nil {
		return nil, &exitError{2, err}
	}
	return ca, nil
}

// printHostsFile writes a hosts-file line for every exact host h answers, and
// says which host patterns a hosts file cannot name.
func printHostsFile(w io.Writer, h *mock.Handler) {
	for _, host := range h.Hosts() {
		if strings.Contains(host, "*") {
			fmt.Fprintf(w, "# %s: a host pattern; add a line for each name you call\n", host)
			continue
		}
		fmt.Fprintf(w, "127.0.0.1 %s\n", host)
	}
}

// printEndpoints writes the table of every call the mock answers, in
// Markdown, as the README shows it.
func printEndpoints(w io.Writer, h *mock.Handler) {
	fmt.Fprintln(w, "| host | method | path | contract |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, ep := range h.Endpoints() {
		hosts := make([]string, len(ep.Hosts))
		for i, host := range ep.Hosts {
			hosts[i] = "`" + host + "`"
		}
		fmt.Fprintf(w, "| %s | %s | `%s` | %s |\n", strings.Join(hosts, ", "), ep.Method, ep.Path, ep.Contract)
	}
}

// connectProxy answers CONNECT for the hosts h serves on port 443: it takes
// the connection over and hands it to the TLS server through proxied, so
// that HTTPS_PROXY pointed at the mock's plain port reaches the services
// with the mock's CA. CONNECT to any other host gets 403 naming it and a
// log line; the mock never opens a connection of its own. Other requests
// go to next.
func connectProxy(h *mock.Handler, next http.Handler, proxied *tunnel.Listener, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			next.ServeHTTP(w, r)
			return
		}
		host, port, err := net.SplitHostPort(r.Host)
		if err != nil {
			host, port = r.Host, "443"
		}
		if !h.Serves(host) || port != "443" {
			why := fmt.Sprintf("the mock serves no host %s on port %s: it proxies HTTPS (port 443) to the hosts xblcall mock --hosts lists, and opens no connection elsewhere",
				safetext.Quote(host, 100), safetext.Quote(port, 8))
			fmt.Fprintf(log, "CONNECT refused from %s: %s\n", r.RemoteAddr, why)
			http.Error(w, why, http.StatusForbidden)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "CONNECT needs HTTP/1.1", http.StatusHTTPVersionNotSupported)
			return
		}
		conn, rw, err := hj.Hijack()
		if err != nil {
			return
		}
		if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			conn.Close()
			return
		}
		if conn := tunnel.Buffered(conn, rw.Reader); !proxied.Push(conn) { // the client may have spoken before the 200
			conn.Close()
		}
	})
}
