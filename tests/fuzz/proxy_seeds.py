#!/usr/bin/env python3
"""Writes the seed scripts of fuzz_proxy (tests/fuzz/fuzz_proxy.c explains
the encoding) into tests/fuzz/corpus/proxy/. Run from the top directory."""
import os

OUT = "tests/fuzz/corpus/proxy"


def send(op, data):
    out = b""
    for i in range(0, len(data), 256):
        part = data[i:i + 256]
        out += bytes([op, len(part) - 1]) + part
    return out


def cs(data):      # client sends
    return send(0x00, data)


def ss(data):      # server sends
    return send(0x06, data)


CSHUT, CCLOSE, SSHUT, SCLOSE = b"\x01", b"\x02", b"\x07", b"\x08"
STEP, CREAD, SREAD = b"\x0a", b"\x0c", b"\x0d"


def accept(sock=0):
    return bytes([0x05 | (sock << 4)])


def advance(quarters):   # (n) * 250 ms, n in 1..16
    return bytes([0x0b | ((quarters - 1) << 4)])


def new_client(sel):
    return bytes([0x03 | (sel << 4)])


GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

SEEDS = {
    "get": b"\x00" + cs(GET) + accept() + SREAD + ss(OK) + CREAD,
    "keepalive_pair": b"\x00" + cs(GET) + accept() + SREAD + ss(OK) + CREAD +
        cs(b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n") + SREAD + ss(OK) + CREAD,
    "chunked": b"\x00" + cs(b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           b"5\r\nhello\r\n0\r\n\r\n") + accept() + SREAD +
        ss(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n") + CREAD,
    "continue": b"\x00" + cs(b"POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                            b"Expect: 100-continue\r\n\r\n") + accept() + SREAD +
        ss(b"HTTP/1.1 100 Continue\r\n\r\n") + CREAD + cs(b"hello") + SREAD + ss(OK) + CREAD,
    "1xx_storm": b"\x00" + cs(GET) + accept() + SREAD +
        ss(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" * 12 + OK) + CREAD,
    "server_close_mid_body": b"\x00" + cs(GET) + accept() + SREAD +
        ss(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n") + STEP + ss(b"hel") + SCLOSE + CREAD,
    "idle_stray_bytes": b"\x00" + cs(GET) + accept() + SREAD + ss(OK) + CREAD +
        ss(b"HTTP/1.1 408 Request Timeout\r\n\r\n") + SCLOSE + STEP +
        cs(GET) + accept() + ss(OK) + CREAD,
    "connect_tunnel": b"\x00" + cs(b"CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n") + accept() +
        SREAD + ss(b"HTTP/1.1 200 OK\r\n\r\n") + CREAD + cs(b"\x16\x03\x01tunnel") + SREAD +
        ss(b"back") + CREAD + CSHUT + SSHUT,
    "upgrade": b"\x00" + cs(b"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n"
                           b"Upgrade: websocket\r\n\r\n") + accept() + SREAD +
        ss(b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n") +
        CREAD + cs(b"\x81\x02hi") + SREAD + ss(b"\x81\x02yo") + CREAD + SCLOSE,
    "rules_local": b"\x00" + cs(b"GET /local HTTP/1.1\r\nHost: a\r\n\r\nGET /deny HTTP/1.1\r\nHost: b\r\n\r\n"
                               b"GET /redir HTTP/1.1\r\nHost: c\r\n\r\n") + STEP + CREAD,
    "buffered_post": b"\x02" + cs(b"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhel") + STEP +
        cs(b"lo deny!") + accept(2) + SREAD + ss(OK) + CREAD,
    "server_close_mode": b"\x00" + cs(b"GET /close HTTP/1.1\r\nHost: x\r\n\r\n") + accept(2) + SREAD +
        ss(OK) + CREAD + cs(b"GET /close/2 HTTP/1.1\r\nHost: x\r\n\r\n") + accept(2) + SREAD +
        ss(OK) + CREAD,
    "reuse_two_clients": b"\x00" + cs(GET) + accept() + SREAD + ss(OK) + CREAD +
        new_client(0) + cs(GET) + STEP + accept(0) + accept(1) + SREAD + ss(OK) + CREAD,
    "timeouts": b"\x00" + cs(b"GET / HTTP/1.1\r\nHo") + advance(16) + CREAD +
        new_client(0) + cs(GET) + accept() + SREAD + advance(16) + advance(8) + CREAD,
    "tcp_echo": b"\x01" + cs(b"hello tcp") + accept(3) + SREAD + ss(b"world") + CREAD + CSHUT +
        SREAD + ss(b"bye") + SSHUT + CREAD,
    "fin_mid_body": b"\x00" + cs(b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello") +
        accept() + SREAD + CSHUT + SREAD + CREAD,
    "big_bodies": b"\x00" + cs(b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 8192\r\n\r\n") +
        b"\xfe" + accept() + SREAD + ss(b"HTTP/1.1 200 OK\r\nContent-Length: 8192\r\n\r\n") + b"\xff" + CREAD,
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(SEEDS), OUT))
