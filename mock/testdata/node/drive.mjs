// Drives two published Xbox clients, unmodified, through their own methods
// against the mock (run by mock/clients_test.go, with resolve.cjs
// preloaded and the mock's CA in NODE_EXTRA_CA_CERTS): sign in at
// login.live.com (@xboxreplay/xboxlive-auth), take the user and XSTS
// tokens, call profile and presence (@xboxreplay/xboxlive-api), wait for
// the test to move the mock's clock past the access token's expiry, refresh
// at login.live.com and go on, then a burst of profile calls. Each step
// prints one JSON line.
import auth from '@xboxreplay/xboxlive-auth';
import api from '@xboxreplay/xboxlive-api';
import { createInterface } from 'node:readline';

const clientId = '000000004C12AE6F'; // xboxlive-auth's own default client
const scope = 'service::user.auth.xboxlive.com::MBI_SSL';
const redirect = 'https://login.live.com/oauth20_desktop.srf';
const print = (o) => console.log(JSON.stringify(o));
const failure = (e) => String(e.statusCode ?? e.details?.statusCode ?? e.attributes?.extra?.statusCode ?? e.data?.attributes?.extra?.statusCode ?? e.message);

async function xsts(accessToken) {
  const user = await auth.xnet.exchangeRpsTicketForUserToken(accessToken, 't');
  const x = await auth.xnet.exchangeTokenForXSTSToken(user.Token, { XSTSRelyingParty: 'http://xboxlive.com' });
  return { userHash: x.DisplayClaims.xui[0].uhs, XSTSToken: x.Token, xuid: x.DisplayClaims.xui[0].xid };
}

async function profile(authz) {
  const r = await api.call({ url: 'https://profile.xboxlive.com/users/me/profile/settings', params: { settings: 'Gamertag' } }, authz, 2);
  return r.profileUsers[0].settings[0].value;
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// The browser's part: open the authorize URL the client makes, take the code.
const page = await fetch(auth.live.getAuthorizeUrl(clientId, scope, 'code', redirect), { redirect: 'manual' });
const code = new URL(page.headers.get('location')).searchParams.get('code');
const first = await auth.live.exchangeCodeForAccessToken(code, clientId, scope, redirect);
let authz = await xsts(first.access_token);
const presence = await api.call({ url: 'https://userpresence.xboxlive.com/users/me', params: { level: 'all' } }, authz, 3);
print({ step: 'signed-in', xuid: authz.xuid, gamertag: await profile(authz), presence: presence.state, expiresIn: first.expires_in });

await lines.next(); // the test moved the mock's clock past the access token's expiry
let expired = 'accepted';
try {
  await auth.xnet.exchangeRpsTicketForUserToken(first.access_token, 't');
} catch (e) {
  expired = failure(e);
}
const again = await auth.live.refreshAccessToken(first.refresh_token, clientId, scope);
authz = await xsts(again.access_token);
print({ step: 'refreshed', expiredToken: expired, gamertag: await profile(authz) });

let served = 0;
const refused = [];
for (let i = 0; i < 12; i++) {
  try {
    await profile(authz);
    served++;
  } catch (e) {
    refused.push(failure(e));
  }
}
print({ step: 'burst', served, refused });
process.exit(0);
