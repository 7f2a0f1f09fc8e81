// Drives the published @xboxreplay/xboxlive-api client (npm, unmodified)
// through xblcall proxy: its call method, 30 profile reads at once (as
// mock/testdata/node/drive.mjs reads profiles), with nothing
// but HTTPS_PROXY set, which the client's axios honours by sending each
// call to the proxy in absolute form (GET https://profile.xboxlive.com/...
// over plain HTTP). The authorization is a mock token's userhash and
// token (TOKEN). Prints one JSON line: the calls served (with the gamertag
// read) and the statuses of the others, as the client reports them. Run
// by cmd/xblcall/proxy_lang_test.go with NODE_PATH at
// mock/testdata/node/node_modules.
'use strict';
const api = require('@xboxreplay/xboxlive-api');

const [, userHash, XSTSToken] = /^XBL3\.0 x=([^;]+);(.*)$/.exec(process.env.TOKEN);
const failure = (e) => String(e.statusCode ?? e.details?.statusCode ?? e.attributes?.extra?.statusCode ?? e.data?.attributes?.extra?.statusCode ?? e.message);

(async () => {
  const out = { served: 0, gamertags: [], refused: [] };
  const calls = Array.from({ length: 30 }, () =>
    api.call({ url: 'https://profile.xboxlive.com/users/me/profile/settings', params: { settings: 'Gamertag' } }, { userHash, XSTSToken }, 2).then(
      (r) => {
        out.served++;
        out.gamertags.push(r.profileUsers[0].settings[0].value);
      },
      (e) => out.refused.push(failure(e)),
    ),
  );
  await Promise.all(calls);
  out.gamertags = [...new Set(out.gamertags)];
  out.refused.sort();
  console.log(JSON.stringify(out));
})();
