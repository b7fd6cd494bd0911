#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): makes an operator call through its socket, AbortMatch
# on its match (it could as well be another's), with grpc-web over HTTP/1.1 as any program can.
# Prints ABORTED when the server obeys.
exec python3 - <<'PY'
import http.client, os, socket

class Socket(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["MAUMAU_ADDR"].removeprefix("unix:"))

match = os.environ["MAUMAU_MATCH_ID"].encode()
message = b"\x0a" + bytes([len(match)]) + match  # AbortMatchRequest.match_id
frame = b"\x00" + len(message).to_bytes(4, "big") + message
c = Socket("localhost")
c.request("POST", "/maumau.v1.MatchService/AbortMatch", frame,
          {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"})
r = c.getresponse()
body = r.read()
status = r.getheader("grpc-status") or ("0" if b"grpc-status:0" in body else body[-200:])
print("AbortMatch answered grpc-status", status)
if status in ("0", b"0"):
    print("ABORTED its match")
raise SystemExit(8)
PY
