// Preloaded with node --require: resolves the hosts the mock serves
// (FGRL_MOCK_HOSTS, comma-separated) to the mock and their HTTPS port 443 to
// the mock's TLS port (FGRL_MOCK_ADDR, host:port), so that a client that
// hard-codes https://<service>.xboxlive.com reaches the mock unchanged,
// without root and without touching /etc/hosts. Any other host resolves as
// usual.
'use strict';
const dns = require('node:dns');
const tls = require('node:tls');

const hosts = new Set((process.env.FGRL_MOCK_HOSTS || '').split(',').filter(Boolean));
const [mockHost, mockPort] = (process.env.FGRL_MOCK_ADDR || '').split(':');
if (hosts.size === 0 || !mockHost || !mockPort) {
  throw new Error('resolve.cjs needs FGRL_MOCK_HOSTS and FGRL_MOCK_ADDR');
}

const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (typeof options === 'function') {
    callback = options;
    options = {};
  }
  if (!hosts.has(String(host).toLowerCase())) {
    return lookup.call(this, host, options, callback);
  }
  if (options && options.all) {
    return process.nextTick(callback, null, [{ address: mockHost, family: 4 }]);
  }
  return process.nextTick(callback, null, mockHost, 4);
};

const connect = tls.connect;
tls.connect = function (...args) {
  const o = args[0];
  if (o && typeof o === 'object') {
    const name = String(o.servername || o.host || '').toLowerCase();
    if (hosts.has(name) && (o.port === undefined || Number(o.port) === 443)) {
      o.port = Number(mockPort);
    }
  }
  return connect.apply(this, args);
};
