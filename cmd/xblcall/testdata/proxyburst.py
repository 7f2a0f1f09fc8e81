"""Sends 30 profile reads at once through xblcall proxy, as a Python
application would: urllib, which reads HTTPS_PROXY (CONNECT) and trusts
SSL_CERT_FILE, each call asking to fail fast (Fgrl-Fail-Fast) rather than
wait for the budget. Standard library only. Prints one JSON line: the calls
served (with the gamertag read), the 429s the proxy marked local, anything
else. Run by cmd/xblcall/proxy_lang_test.go."""
import json
import os
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

URL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
HEADERS = {"Authorization": os.environ["TOKEN"], "x-xbl-contract-version": "3", "Fgrl-Fail-Fast": "true"}


def get(_):
    req = urllib.request.Request(URL, headers=HEADERS)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
    except OSError as e:
        return "error " + str(e)[:80], {}, b""


out = {"served": 0, "local429": 0, "gamertags": [], "other": []}
with ThreadPoolExecutor(max_workers=30) as pool:
    for status, headers, body in pool.map(get, range(30)):
        if status == 200:
            out["served"] += 1
            out["gamertags"].append(json.loads(body)["profileUsers"][0]["settings"][0]["value"])
        elif (status == 429 and headers.get("Fgrl-Refused") == "local" and int(headers.get("Retry-After", "0")) > 0
              and json.loads(body)["maxRequests"] == 10):
            out["local429"] += 1
        else:
            out["other"].append(str(status))
out["gamertags"] = sorted(set(out["gamertags"]))
print(json.dumps(out))
