// Sends 30 profile reads at once through xblcall proxy, as a Node
// application would: HTTPS_PROXY through https-proxy-agent (Node 20's own
// https ignores HTTPS_PROXY), the proxy's CA trusted with
// NODE_EXTRA_CA_CERTS, each call asking to fail fast (Fgrl-Fail-Fast)
// rather than wait for the budget. Prints one JSON line: the calls served
// (with the gamertag read), the 429s the proxy marked local, anything else.
// Run by cmd/xblcall/proxy_lang_test.go, with NODE_PATH at
// mock/testdata/node/node_modules.
'use strict';
const https = require('node:https');
const { HttpsProxyAgent } = require('https-proxy-agent');

const agent = new HttpsProxyAgent(process.env.HTTPS_PROXY);
const url = 'https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag';
const headers = { Authorization: process.env.TOKEN, 'x-xbl-contract-version': '3', 'Fgrl-Fail-Fast': 'true' };

function get() {
  return new Promise((resolve) => {
    const req = https.get(url, { agent, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, local: res.headers['fgrl-refused'] === 'local', retryAfter: res.headers['retry-after'], body }));
    });
    req.on('error', (e) => resolve({ status: 'error ' + e.message }));
    req.setTimeout(30000, () => req.destroy(new Error('timeout')));
  });
}

(async () => {
  const out = { served: 0, local429: 0, gamertags: [], other: [] };
  for (const r of await Promise.all(Array.from({ length: 30 }, get))) {
    if (r.status === 200) {
      out.served++;
      out.gamertags.push(JSON.parse(r.body).profileUsers[0].settings[0].value);
    } else if (r.status === 429 && r.local && Number(r.retryAfter) > 0 && JSON.parse(r.body).maxRequests === 10) {
      out.local429++;
    } else {
      out.other.push(String(r.status));
    }
  }
  out.gamertags = [...new Set(out.gamertags)];
  console.log(JSON.stringify(out));
})();
