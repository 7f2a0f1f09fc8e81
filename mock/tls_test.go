package mock

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestTLSServer: a client that trusts the CA reaches every exact host the
// mock answers at its real name over HTTPS, hosts of a pattern included,
// and a service answers as over plain HTTP.
func TestTLSServer(t *testing.T) {
	s := NewTLSServer(nil)
	defer s.Close()
	u, _ := url.Parse(s.URL)
	hosts := s.Handler.Hosts()
	for _, want := range []string{"profile.xboxlive.com", "login.live.com", "user.auth.xboxlive.com", "xsts.auth.xboxlive.com", "club*.xboxlive.com"} {
		if !contains(hosts, want) {
			t.Errorf("Hosts() lacks %s: %v", want, hosts)
		}
	}
	for _, h := range append(hosts, "clubhub.xboxlive.com") {
		if strings.Contains(h, "*") {
			continue
		}
		conn, err := tls.Dial("tcp", u.Host, &tls.Config{ServerName: h, RootCAs: s.CA.Pool()})
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		conn.Close()
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Gamertag") || resp.TLS == nil {
		t.Errorf("profile over TLS: %d %s", resp.StatusCode, b)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestTLSRefusals: a host the mock does not serve (SNI) is refused in the
// handshake with an error naming it, and a client that does not trust the
// CA refuses the mock.
func TestTLSRefusals(t *testing.T) {
	s := NewTLSServer(nil)
	defer s.Close()
	u, _ := url.Parse(s.URL)
	_, err := tls.Dial("tcp", u.Host, &tls.Config{ServerName: "bank.example.com", RootCAs: s.CA.Pool()})
	if err == nil {
		t.Error("a handshake for bank.example.com succeeded")
	}
	plain := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, u.Host)
	}}}
	_, err = plain.Get("https://profile.xboxlive.com/")
	var unknown *tls.CertificateVerificationError
	if !errors.As(err, &unknown) {
		t.Errorf("a client without the CA: %v, want a certificate verification error", err)
	}
}
