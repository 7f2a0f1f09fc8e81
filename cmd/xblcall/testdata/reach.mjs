// Reaches every host in FGRL_MOCK_HOSTS over HTTPS with Node's own https
// client, trusting the mock's CA (NODE_EXTRA_CA_CERTS), and prints "host
// status" a line. "direct": at the real names, resolved to the mock by
// mock/testdata/node/resolve.cjs (preloaded). "proxy": through the mock's
// plain port as an HTTPS proxy (FGRL_PROXY, host:port), with CONNECT.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

const [mode] = process.argv.slice(2);
const hosts = process.env.FGRL_MOCK_HOSTS.split(',');
const [proxyHost, proxyPort] = (process.env.FGRL_PROXY || ':').split(':');

function answer(host, options) {
  return new Promise((resolve) => {
    const req = https.get({ host, path: '/', agent: false, ...options }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('error', (e) => resolve('error ' + e.code));
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
  });
}

function viaProxy(host) {
  return new Promise((resolve) => {
    const req = http.request({ host: proxyHost, port: proxyPort, method: 'CONNECT', path: host + ':443' });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        return resolve('CONNECT ' + res.statusCode);
      }
      const agent = new https.Agent();
      agent.createConnection = () => tls.connect({ socket, servername: host }); // the tunnel, TLS at the real name
      answer(host, { agent }).then(resolve);
    });
    req.on('error', (e) => resolve('error ' + e.code));
    req.end();
  });
}

for (const host of hosts) {
  console.log(host, mode === 'proxy' ? await viaProxy(host) : await answer(host, {}));
}
