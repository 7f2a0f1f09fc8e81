// A game backend's sign-in written with nothing but Node: its Business
// Partner Certificate as the client TLS certificate (FGRL_PARTNER, one PEM
// file with the key), a P-256 proof key from node:crypto, every request
// signed as Microsoft's GDK documentation ("Title service calls to Xbox
// services", Proof keys) describes, with a raw r||s signature
// (dsaEncoding ieee-p1363). Against xblcall mock --https (FGRL_MOCK_ADDR,
// its CA in NODE_EXTRA_CA_CERTS): XSAS, XSTS for the service and for a
// user signed in with the mock's device code, signed calls, and a call
// signed over another path. Prints "step status" a line.
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';

const [mockHost, mockPort] = process.env.FGRL_MOCK_ADDR.split(':');
const partner = fs.readFileSync(process.env.FGRL_PARTNER);
const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = publicKey.export({ format: 'jwk' });
const proofKey = { alg: 'ES256', kty: 'EC', use: 'sig', crv: 'P-256', x: jwk.x, y: jwk.y };

// sign returns the Signature header of a request: policy version 1, the
// instant as a Windows file time, ECDSA P-256 over SHA-256 of version,
// time, method, path and query, Authorization and body, each followed by
// a null byte (the body cut at maxBody bytes).
function sign(method, path, auth, body, maxBody) {
  const version = Buffer.alloc(4);
  version.writeUInt32BE(1);
  const time = Buffer.alloc(8);
  time.writeBigUInt64BE(BigInt(Date.now()) * 10000n + 116444736000000000n);
  const z = Buffer.alloc(1);
  const data = Buffer.concat([version, z, time, z, Buffer.from(method.toUpperCase()), z, Buffer.from(path), z,
    Buffer.from(auth || ''), z, Buffer.from(body || '').subarray(0, maxBody), z]);
  const sig = crypto.sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return Buffer.concat([version, time, sig]).toString('base64');
}

// send makes one request to host at the mock, presenting the partner
// certificate; signPath, when given, is the path the signature covers.
function send(host, method, path, { body, auth, form, signed, maxBody = 8192, signPath } = {}) {
  const headers = { 'x-xbl-contract-version': '1', Host: host };
  if (form) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  else if (body) headers['Content-Type'] = 'application/json';
  if (auth) headers.Authorization = auth;
  if (signed) headers.Signature = sign(method, signPath || path, auth, body, maxBody);
  return new Promise((resolve) => {
    const req = https.request({ host: mockHost, port: mockPort, servername: host, method, path, headers,
      cert: partner, key: partner, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, json });
      });
    });
    req.on('error', (e) => resolve({ status: 'error ' + e.code, json: null }));
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    req.end(body);
  });
}

const whole = 1 << 20; // XSAS and XSTS sign the whole body
const show = (step, r) => console.log(step, r.status);

const xsas = await send('service.auth.xboxlive.com', 'POST', '/service/authenticate', { signed: true, maxBody: whole,
  body: JSON.stringify({ RelyingParty: 'http://auth.xboxlive.com', TokenType: 'JWT', Properties: { ProofKey: proofKey } }) });
show('xsas', xsas);
const sToken = xsas.json.Token;
const xsts = (props) => send('xsts.auth.xboxlive.com', 'POST', '/xsts/authorize', { signed: true, maxBody: whole,
  body: JSON.stringify({ RelyingParty: 'http://xboxlive.com', TokenType: 'JWT', Properties: { ServiceToken: sToken, SandboxId: 'RETAIL', ...props } }) });
const service = await xsts({});
show('xsts-service', service);

// A user signs in (the mock's device code flow) for the service's relying
// party; the answer carries their DelegationToken.
const ms = 'login.microsoftonline.com';
const dc = await send(ms, 'POST', '/consumers/oauth2/v2.0/devicecode', { form: true, body: 'client_id=node-backend&scope=XboxLive.signin' });
const poll = () => send(ms, 'POST', '/consumers/oauth2/v2.0/token', { form: true,
  body: `grant_type=urn:ietf:params:oauth:grant-type:device_code&client_id=node-backend&device_code=${dc.json.device_code}` });
let access = await poll();
if (access.status !== 200) access = await poll(); // the first poll finds the code not yet entered
const user = await send('user.auth.xboxlive.com', 'POST', '/user/authenticate', { body: JSON.stringify({
  RelyingParty: 'http://auth.xboxlive.com', TokenType: 'JWT',
  Properties: { AuthMethod: 'RPS', SiteName: 'user.auth.xboxlive.com', RpsTicket: 'd=' + access.json.access_token } }) });
const forService = await send('xsts.auth.xboxlive.com', 'POST', '/xsts/authorize', { body: JSON.stringify({
  RelyingParty: 'rp://fgrl-mock-service/', TokenType: 'JWT', Properties: { UserTokens: [user.json.Token], SandboxId: 'RETAIL' } }) });
const claims = forService.json.DisplayClaims.xui[0];
console.log('delegation-token', claims.DelegationToken ? 'yes' : 'no');
const delegated = await xsts({ DelegationToken: claims.DelegationToken });
show('xsts-delegated', delegated);
const xui = delegated.json.DisplayClaims.xui[0];

const profile = '/users/me/profile/settings?settings=Gamertag';
const session = '/serviceconfigs/00000000-0000-0000-0000-0000499602d2/sessiontemplates/lobby/sessions/node';
const asService = 'XBL3.0 x=-;' + service.json.Token;
const asUser = `XBL3.0 x=${xui.uhs};${delegated.json.Token}`;
show('service-mpsd', await send('sessiondirectory.xboxlive.com', 'GET', session, { auth: asService, signed: true }));
show('service-profile', await send('profile.xboxlive.com', 'GET', profile, { auth: asService, signed: true }));
show('delegated-profile', await send('profile.xboxlive.com', 'GET', profile, { auth: asUser, signed: true }));
show('delegated-unsigned', await send('profile.xboxlive.com', 'GET', profile, { auth: asUser }));
show('delegated-other-path', await send('profile.xboxlive.com', 'GET', profile, { auth: asUser, signed: true,
  signPath: '/users/me/profile/settings?settings=Gamerscore' }));
