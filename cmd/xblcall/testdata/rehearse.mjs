// A test in another language against `xblcall mock --script` (run by
// cmd/xblcall/rehearsal_test.go with the mock's address in FGRL_MOCK and a
// token in FGRL_TOKEN): plays the script's three answers, starts a
// two-minute presence outage through the admin API, and then, as code that
// ignores a 429 would, calls presence again at once. Prints one JSON line.
import http from 'node:http';

const base = new URL(process.env.FGRL_MOCK);
const token = process.env.FGRL_TOKEN;

function call(method, host, path, body) {
  return new Promise((resolve, reject) => {
    const headers = { Host: host, Authorization: token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const req = http.request({ host: base.hostname, port: base.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] || '', text }));
    });
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

const presence = () => call('GET', 'userpresence.xboxlive.com', '/users/xuid(2533274790000001)');
const out = { sequence: [], outage: [], profile: 0, ignored: [] };
for (let i = 0; i < 4; i++) out.sequence.push((await presence()).status);
const set = await call('PUT', base.host, '/_fgrl/api/faults',
  { services: [{ service: 'presence', status: 429, retryAfter: '30s', for: '2m' }] });
out.faultsSet = set.status;
const first = await presence();
out.outage.push([first.status, first.retryAfter]);
out.profile = (await call('GET', 'profile.xboxlive.com', '/users/me/profile/settings?settings=Gamertag')).status;
for (let i = 0; i < 3; i++) out.ignored.push((await presence()).status); // no wait: the bug
console.log(JSON.stringify(out));
