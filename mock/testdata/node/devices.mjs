// Drives @xboxreplay/xboxlive-auth's credential sign-in (login.live.com's
// page and form, the implicit grant's fragment) and prismarine-auth,
// unmodified, through their own methods against the mock (run by mock/clients_test.go, with resolve.cjs preloaded and the
// mock's CA in NODE_EXTRA_CA_CERTS): the device code sign-in at
// login.live.com (approved at once by the mock's default world), then its
// "sisu" flow (a device token signed with its proof key, SISU's authorize)
// and its "live" flow (a signed user token, a device token, XSTS with the
// device token and a signature); with each XSTS token it reads profile,
// presence and social (@xboxreplay/xboxlive-api). Each flow prints one
// JSON line.
import prismarine from 'prismarine-auth';
import api from '@xboxreplay/xboxlive-api';
import auth from '@xboxreplay/xboxlive-auth';

const { Authflow, Titles } = prismarine;
const print = (o) => console.log(JSON.stringify(o));

async function read(xsts) {
  const authz = { userHash: xsts.userHash, XSTSToken: xsts.XSTSToken };
  const profile = await api.call({ url: 'https://profile.xboxlive.com/users/me/profile/settings', params: { settings: 'Gamertag' } }, authz, 2);
  const presence = await api.call({ url: 'https://userpresence.xboxlive.com/users/me', params: { level: 'all' } }, authz, 3);
  const summary = await api.call({ url: 'https://social.xboxlive.com/users/me/summary' }, authz, 2);
  return { gamertag: profile.profileUsers[0].settings[0].value, presence: presence.state, following: summary.targetFollowingCount };
}

const byPassword = await auth.authenticate('MockPlayer@example.com', 'any password');
print({ flow: 'password', xuid: byPassword.xuid, ...(await read({ userHash: byPassword.user_hash, XSTSToken: byPassword.xsts_token })) });

for (const [flow, deviceType, title] of [['sisu', 'iOS', Titles.XboxGamepassIOS], ['live', 'Nintendo', Titles.MinecraftNintendoSwitch]]) {
  let code = {};
  const auth = new Authflow(flow + '-player', process.cwd(), { flow, authTitle: title, deviceType },
    (c) => { code = { uri: c.verification_uri, userCode: typeof c.user_code === 'string' && c.user_code.length > 0 }; });
  const xsts = await auth.getXboxToken('http://xboxlive.com');
  print({ flow, code, xuid: xsts.userXUID, ...(await read(xsts)) });
}
process.exit(0);
