package adminaccess

import (
	"net/http/httptest"
	"testing"
)

// BREAK: Rule.Hosts are "names the endpoints answer to besides IP
// addresses and localhost" (admin.Config.Hosts: "further names the Host
// header may carry (the machine's name, a container's network alias)").
// A name given in its fully qualified form, with its trailing dot
// ("devbox.lan.", as --admin-host devbox.lan. or a resolv.conf search
// result gives it), is never admitted: not as "devbox.lan.", the very
// spelling it was given, nor as "devbox.lan". The Host's trailing dot is
// dropped before the compare, the given name's is not.
func TestAttack68GivenNameWithTrailingDot(t *testing.T) {
	rule := Rule{Hosts: []string{"devbox.lan."}, Server: "mock", TokenName: "admin token"}
	for _, h := range []string{"devbox.lan.", "devbox.lan.:8080", "devbox.lan", "DEVBOX.LAN:8080"} {
		r := httptest.NewRequest("GET", "/_fgrl/api/ready", nil)
		r.Host, r.RemoteAddr = h, "127.0.0.1:50000"
		if status, why := rule.Admit(r); status != 0 {
			t.Errorf("Host %q with Hosts %q: %d %s", h, rule.Hosts, status, why)
		}
	}
}

// held: a name given among Hosts admits that name only: not a name that
// merely ends or starts with it, nor one of its subdomains, nor an
// empty Host.
func TestAttack68GivenNamesExact(t *testing.T) {
	rule := Rule{Hosts: []string{"devbox.lan", "mock"}, Server: "mock", TokenName: "admin token"}
	for _, h := range []string{"evil.devbox.lan", "devbox.lan.evil", "mock.evil.example", "evilmock", "mock..", "", "devbox.lan..:80"} {
		r := httptest.NewRequest("GET", "/_fgrl/api/ready", nil)
		r.Host, r.RemoteAddr = h, "127.0.0.1:50000"
		if status, _ := rule.Admit(r); status == 0 {
			t.Errorf("Host %q admitted with Hosts %q", h, rule.Hosts)
		}
	}
}
