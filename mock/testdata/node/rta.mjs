// Node's own WebSocket client (undici's, built into Node), speaking XSAPI's
// RTA protocol to wss://rta.xboxlive.com/connect (resolve.cjs sends it to
// the mock): subscribes to FGRL_TARGET's device presence and prints every
// message as a JSON line, closing after the first event.
const ws = new WebSocket('wss://rta.xboxlive.com/connect', {
  protocols: ['rta.xboxlive.com.V2'],
  headers: { Authorization: process.env.FGRL_TOKEN },
});
ws.onopen = () => ws.send(JSON.stringify([1, 1, `https://userpresence.xboxlive.com/users/xuid(${process.env.FGRL_TARGET})/devices`]));
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  console.log(JSON.stringify([m[0], m[1], m[2]]));
  if (m[0] === 3) ws.close(1000);
};
ws.onerror = (e) => { console.error('error', e.message); process.exit(1); };
ws.onclose = () => process.exit(0);
