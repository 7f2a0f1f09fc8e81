// Drives @xboxreplay/xboxlive-auth's credential sign-in (login.live.com's
// page and form, the implicit grant's fragment) and prismarine-auth,
// unmodified, through their own methods against the mock (run by mock/clients_test.go, with resolve.cjs preloaded and the
// mock's CA in NODE_EXTRA_CA_CERTS): the device code sign-in at
// login.live.com (approved at once by the mock's default world), then its
// "sisu" flow (a device token signed with its proof key, SISU's authorize)
// and its "live" flow (a signed user token, a device token, XSTS with the
// device token and a signature); with each XSTS token it reads profile,
// presence and social (@xboxreplay/xboxlive-api), and writes a session
// through the same client's call (MPSD's PUT, contract 107, the member
// "me" joining) under its title's SCID and under another title's, whose
// SCIDs the test gives (FGRL_OWN_SCID, FGRL_OTHER_SCID). Each flow prints
// one JSON line.
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

const failure = (e) => String(e.statusCode ?? e.details?.statusCode ?? e.attributes?.extra?.statusCode ?? e.data?.attributes?.extra?.statusCode ?? e.message);

// write PUTs a session named name under scid; "written", or the failure's
// status.
async function write(xsts, scid, name) {
  const authz = { userHash: xsts.userHash, XSTSToken: xsts.XSTSToken };
  const url = `https://sessiondirectory.xboxlive.com/serviceconfigs/${scid}/sessionTemplates/lobby/sessions/${name}`;
  try {
    await api.call({ url, method: 'PUT', data: { members: { me: { constants: { system: { initialize: true } } } } } }, authz, 107);
    return 'written';
  } catch (e) {
    return failure(e);
  }
}

const byPassword = await auth.authenticate('MockPlayer@example.com', 'any password');
print({ flow: 'password', xuid: byPassword.xuid, ...(await read({ userHash: byPassword.user_hash, XSTSToken: byPassword.xsts_token })) });

for (const [flow, deviceType, title] of [['sisu', 'iOS', Titles.XboxGamepassIOS], ['live', 'Nintendo', Titles.MinecraftNintendoSwitch]]) {
  let code = {};
  const auth = new Authflow(flow + '-player', process.cwd(), { flow, authTitle: title, deviceType },
    (c) => { code = { uri: c.verification_uri, userCode: typeof c.user_code === 'string' && c.user_code.length > 0 }; });
  const xsts = await auth.getXboxToken('http://xboxlive.com');
  const sessions = { own: await write(xsts, process.env.FGRL_OWN_SCID, flow), other: await write(xsts, process.env.FGRL_OTHER_SCID, flow) };
  print({ flow, code, xuid: xsts.userXUID, ...(await read(xsts)), sessions });
}
process.exit(0);
