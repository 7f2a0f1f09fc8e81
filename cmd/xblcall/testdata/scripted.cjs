// Drives the published @xboxreplay/xboxlive-api client (npm, unmodified)
// through its call method against `xblcall mock --script
// testdata/scripted.yaml` over HTTPS at the real names (resolve.cjs
// preloaded, the mock's CA in NODE_EXTRA_CA_CERTS, NODE_PATH at
// mock/testdata/node/node_modules): eight reads of a profile by gamertag,
// each with a timeout of 15 s but the sixth's (the script's hang), 1 s: the
// first seven answered by the script, the last by the mock; then the
// client's own getPlayerXUID. Prints one JSON line: what the client
// reported of each, its own error's status code and message, or the XUID
// and gamertag it read.
// Run by cmd/xblcall/scripted_test.go; TOKEN is a mock token.
'use strict';
const api = require('@xboxreplay/xboxlive-api');

const [, userHash, XSTSToken] = /^XBL3\.0 x=([^;]+);(.*)$/.exec(process.env.TOKEN);

(async () => {
  const out = [];
  for (let i = 0; i < 8; i++) {
    try {
      const r = await api.call({ url: 'https://profile.xboxlive.com/users/gt(MockPlayer)/profile/settings', params: { settings: 'Gamertag' }, timeout: i === 5 ? 1000 : 15000 },
        { userHash, XSTSToken }, 2);
      const u = r.profileUsers[0];
      out.push({ xuid: u.id, gamertag: u.settings.find((s) => s.id === 'Gamertag')?.value ?? '' });
    } catch (e) {
      out.push({ status: e.statusCode ?? e.details?.statusCode ?? e.attributes?.extra?.statusCode ?? 0, message: String(e.message).slice(0, 80) });
    }
  }
  // The client's own gamertag lookup asks /users/gt(...)/settings, a path
  // the mock does not serve.
  try {
    out.push({ xuid: await api.getPlayerXUID('MockPlayer', { userHash, XSTSToken }) });
  } catch (e) {
    out.push({ status: e.statusCode ?? e.details?.statusCode ?? e.attributes?.extra?.statusCode ?? 0, message: String(e.message).slice(0, 80) });
  }
  console.log(JSON.stringify(out));
})();
