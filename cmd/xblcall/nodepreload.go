package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
)

// nodePreload is the CommonJS preload --node-preload writes, for
// node --require: %s is the hosts served (a JSON array), then the
// address, its family (4 or 6) and the port of the mock's --https.
//
// Node 20 ignores HTTPS_PROXY, so a Node client reaches the mock at the
// real names only by resolving them to it: the preload answers dns.lookup
// for the hosts served with the mock's address, and sends tls.connect's
// port 443 for them to the mock's TLS port. https, fetch (undici) and the
// published clients all connect through these two.
const nodePreload = `// Written by xblcall mock --node-preload. Load it with node --require FILE:
// the hosts the mock serves resolve to the mock at %[2]s, and their HTTPS
// port 443 is the mock's TLS port %[4]d, so that a client that hard-codes
// https://<service>.xboxlive.com reaches the mock unchanged (trust its CA:
// NODE_EXTRA_CA_CERTS). Every other host resolves as usual.
'use strict';
const dns = require('node:dns');
const tls = require('node:tls');

const hosts = new Set(%[1]s);
const address = '%[2]s';
const family = %[3]d;
const port = %[4]d;

const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (typeof options === 'function') {
    callback = options;
    options = {};
  }
  if (!hosts.has(String(host).toLowerCase().replace(/\.$/, ''))) {
    return lookup.call(this, host, options, callback);
  }
  if (options && options.all) {
    return process.nextTick(callback, null, [{ address, family }]);
  }
  return process.nextTick(callback, null, address, family);
};

const connect = tls.connect;
tls.connect = function (...args) {
  const o = args[0];
  if (o && typeof o === 'object') {
    const name = String(o.servername || o.host || '').toLowerCase().replace(/\.$/, '');
    if (hosts.has(name) && (o.port === undefined || Number(o.port) === 443)) {
      o.port = port;
    }
  }
  return connect.apply(this, args);
};
`

// nodePreloadFor is the preload for a mock serving hosts with its TLS
// port at addr: a listener on every interface is reached on loopback.
func nodePreloadFor(hosts []string, addr *net.TCPAddr) []byte {
	ip, family := addr.IP, 4
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if ip.To4() == nil {
		family = 6
	}
	list, _ := json.Marshal(hosts) // strings always encode
	var b bytes.Buffer
	fmt.Fprintf(&b, nodePreload, list, ip.String(), family, addr.Port)
	return b.Bytes()
}
