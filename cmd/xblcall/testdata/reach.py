"""Reaches every host in FGRL_MOCK_HOSTS over HTTPS with Python's own
http.client, trusting the mock's CA (FGRL_MOCK_CA), and prints "host status"
a line. "direct": TLS at the real name to the mock's TLS port
(FGRL_MOCK_ADDR); "proxy": through the mock's plain port as an HTTPS proxy
(FGRL_PROXY), with CONNECT, as HTTPS_PROXY makes urllib and requests do."""
import http.client
import os
import socket
import ssl
import sys

mode = sys.argv[1]
ctx = ssl.create_default_context(cafile=os.environ["FGRL_MOCK_CA"])


def direct(host):
    mh, mp = os.environ["FGRL_MOCK_ADDR"].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, context=ctx, timeout=10)
    conn.sock = ctx.wrap_socket(socket.create_connection((mh, int(mp)), timeout=10), server_hostname=host)
    return conn


def proxied(host):
    ph, pp = os.environ["FGRL_PROXY"].rsplit(":", 1)
    conn = http.client.HTTPSConnection(ph, int(pp), context=ctx, timeout=10)
    conn.set_tunnel(host, 443)
    return conn


for host in os.environ["FGRL_MOCK_HOSTS"].split(","):
    try:
        conn = proxied(host) if mode == "proxy" else direct(host)
        conn.request("GET", "/")
        status = str(conn.getresponse().status)
        conn.close()
    except OSError as e:
        status = "error " + str(e).splitlines()[0][:80]
    print(host, status, flush=True)
