package adminaccess_test

import (
	"net/http/httptest"
	"testing"

	"github.com/xblgo/fgrl/internal/adminaccess"
)

func attack71Admit(rule adminaccess.Rule, host string, hdr map[string]string) int {
	r := httptest.NewRequest("GET", "/_fgrl/api/ready", nil)
	r.Host, r.RemoteAddr = host, "127.0.0.1:50000"
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	status, _ := rule.Admit(r)
	return status
}

// held: a name given among Hosts in any case, with or without its
// trailing dot, admits the Host naming it in any case, with or without
// its trailing dot and with a port; names that only differ from it by a
// second dot, an inner dot, a label more or less are refused; IP
// addresses and localhost with a trailing dot are what they are without
// it; a page at the FQDN spelling whose Origin matches its Host is not
// another site. Promised (package doc): "the Host must be an IP address,
// localhost or a name the server was given (a guard against DNS
// rebinding)"; (commit 06394f1) "a host given with its trailing dot is
// the same name".
func TestAttack71HostsTrailingDotsAndCase(t *testing.T) {
	for _, given := range [][]string{{"DevBox.Lan."}, {"devbox.lan"}, {"DEVBOX.LAN"}, {"devbox.lan."}} {
		rule := adminaccess.Rule{Hosts: given, Server: "mock", TokenName: "admin token"}
		for _, h := range []string{"devbox.lan", "DevBox.LAN.", "devbox.lan.:8080", "DEVBOX.LAN:1", "localhost.", "LOCALHOST.:80", "127.0.0.1.", "[::1]:80", "[::1]"} {
			if s := attack71Admit(rule, h, nil); s != 0 {
				t.Errorf("Hosts %q, Host %q: %d", given, h, s)
			}
		}
		for _, h := range []string{"devbox.lan..", "devbox..lan", ".devbox.lan", "devbox", "lan", "x.devbox.lan.", "devbox.lan.x", "devbox.lan. ", " devbox.lan", "localhost..", "evil.localhost", "127.0.0.1.evil"} {
			if s := attack71Admit(rule, h, nil); s == 0 {
				t.Errorf("Hosts %q, Host %q admitted", given, h)
			}
		}
		if s := attack71Admit(rule, "devbox.lan.:8080", map[string]string{"Origin": "http://devbox.lan.:8080"}); s != 0 {
			t.Errorf("Hosts %q, a page at its own FQDN: %d", given, s)
		}
		if s := attack71Admit(rule, "devbox.lan.:8080", map[string]string{"Origin": "http://evil.example:8080"}); s == 0 {
			t.Errorf("Hosts %q, another site's page admitted", given)
		}
	}
}
