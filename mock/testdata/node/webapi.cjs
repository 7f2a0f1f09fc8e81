// Drives the published xbox-webapi client (npm, unmodified) through its own
// methods against the mock (run by mock/clients_test.go, with resolve.cjs
// preloaded, the mock's CA in NODE_EXTRA_CA_CERTS and a scratch working
// directory, where the client keeps its .tokens.json): sign in at
// login.live.com with the client's own authorize URL and code exchange,
// let isAuthenticated take the user and XSTS tokens, then call every
// provider method whose route the mock serves. The sign-in skips only the
// client's express callback server, whose redirect URI is fixed at
// localhost:8080; the test reads the code from the redirect instead. Prints
// one JSON line: what each call answered, or its HTTP status.
'use strict';
const XboxApiClient = require('xbox-webapi');

const print = (o) => console.log(JSON.stringify(o));

async function attempt(fn) {
  try {
    return await fn();
  } catch (e) {
    return { failed: e && e.status !== undefined ? e.status : String(e && (e.message || e.error || e)) };
  }
}

async function main() {
  const client = XboxApiClient({ clientId: '5e5ead27-ed60-482d-b3fc-702b28a97404' });
  const auth = client._authentication;
  // The browser's part: open the client's authorize URL, take the code.
  const page = await fetch(auth.generateAuthorizationUrl(), { redirect: 'manual' });
  const code = new URL(page.headers.get('location')).searchParams.get('code');
  auth._tokens.oauth = await auth.getTokenRequest(code);
  await client.isAuthenticated();
  const xuid = auth._user.xid;

  const p = (name) => client.getProvider(name);
  const history = await p('titlehub').getTitleHistory();
  const title = history.titles[0];
  const out = { xuid, gamertag: client.getUserGamertag() };
  out.profile = await attempt(async () => (await p('profile').getUserProfile()).profileUsers[0].settings.map((s) => s.id));
  out.presence = await attempt(async () => (await p('userpresence').getCurrentUser()).state);
  out.summary = await attempt(async () => (await p('social').getFriends()).targetFollowingCount);
  out.friends = await attempt(async () => (await p('people').getFriends()).people.map((f) => [f.gamertag, typeof f.presenceDetails, typeof f.preferredColor]));
  out.recent = await attempt(async () => (await p('people').recentPlayers()).people.map((f) => [f.gamertag, f.recentPlayer && f.recentPlayer.titles]));
  out.titleHistory = history.titles.map((t) => [t.titleId, t.achievement && t.achievement.currentGamerscore]);
  out.titleInfo = await attempt(async () => (await p('titlehub').getTitleId(title.titleId)).titles.map((t) => t.name));
  out.history = await attempt(async () => (await p('achievements').getTitleAchievements()).titles.map((t) => [String(t.titleId), t.currentGamerscore]));
  out.achievements = await attempt(async () => (await p('achievements').getTitleId(title.titleId)).achievements.length);
  out.history360 = await attempt(async () => (await p('achievements').getTitleAchievements360()).titles.length);
  out.achievements360 = await attempt(async () => (await p('achievements').getTitleId360(title.titleId)).achievements.length);
  out.stats = await attempt(async () => (await p('userstats').getUserTitleStats(title.titleId)).statlistscollection[0].stats.map((s) => [s.name, s.value]));
  print(out);
}

main().catch((e) => {
  console.error(e && e.status !== undefined ? `HTTP ${e.status}` : String(e && (e.message || e)));
  process.exit(1);
});
