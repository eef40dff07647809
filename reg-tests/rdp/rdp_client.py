#!/usr/bin/env python3
"""An RDP client's first bytes: a TPKT header, an X.224 Connection Request
and its cookie line, sent to host:port; prints what the server sends back
(its name). Usage: rdp_client.py HOST PORT COOKIE-LINE-VALUE
(e.g. "mstshash=alice")."""
import socket, sys

host, port, cookie = sys.argv[1], int(sys.argv[2]), sys.argv[3]
line = b"Cookie: " + cookie.encode() + b"\r\n"
neg = bytes.fromhex("0100080003000000")   # RDP negotiation request
body = bytes.fromhex("e000000000" "00") + line + neg
pdu = bytes([len(body)]) + body
pkt = bytes([3, 0]) + (4 + len(pdu)).to_bytes(2, "big") + pdu
s = socket.create_connection((host, port), timeout=5)
s.sendall(pkt)
out = b""
while True:
    d = s.recv(100)
    if not d:
        break
    out += d
print(out.decode())
