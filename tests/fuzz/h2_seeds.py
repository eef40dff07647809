#!/usr/bin/python3
"""Writes the seed inputs of fuzz_h2 (tests/fuzz/fuzz_h2.c explains the
encoding) into tests/fuzz/corpus/h2/. Run from the top directory with the
system python (python3-h2 brings hyperframe and hpack)."""
import os

from hpack import Encoder
from hyperframe.frame import (ContinuationFrame, DataFrame, GoAwayFrame, HeadersFrame,
                              PingFrame, PriorityFrame, RstStreamFrame, SettingsFrame,
                              WindowUpdateFrame)

OUT = "tests/fuzz/corpus/h2"
SEP = b"\xfe\xfeSRV"

# byte 0 flags (fuzz_h2.c)
NO_PREFACE, NO_SETTINGS, SRV_CLOSE, CLI_SHUT = 1, 2, 4, 8
FE_H2, FE_BUF, FE_H1 = 0x00, 0x10, 0x30
T_100MS, T_1S, T_3S = 0x40, 0x80, 0xc0


class Client:
    """The client's frames; one HPACK encoder for the connection."""

    def __init__(self):
        self.enc = Encoder()
        self.out = b""

    def headers(self, sid, hdrs, end=True, split=0):
        block = self.enc.encode(hdrs)
        flags = ["END_STREAM"] if end else []
        if split and split < len(block):
            self.out += HeadersFrame(sid, block[:split], flags=flags).serialize()
            rest = block[split:]
            while rest:
                part, rest = rest[:split], rest[split:]
                cf = ContinuationFrame(sid, part, flags=[] if rest else ["END_HEADERS"])
                self.out += cf.serialize()
        else:
            self.out += HeadersFrame(sid, block, flags=flags + ["END_HEADERS"]).serialize()
        return self

    def req(self, sid, path="/", method="GET", extra=(), end=True, split=0):
        hdrs = [(":method", method), (":scheme", "http"), (":path", path),
                (":authority", "x")] + list(extra)
        return self.headers(sid, hdrs, end, split)

    def data(self, sid, payload, end=True):
        self.out += DataFrame(sid, payload, flags=["END_STREAM"] if end else []).serialize()
        return self

    def frame(self, f):
        self.out += f.serialize()
        return self

    def raw(self, b):
        self.out += b
        return self


def seed(flags, pieces, client, *servers):
    body = client.out if isinstance(client, Client) else client
    return bytes([flags, pieces]) + SEP.join([body] + list(servers))


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
TRAILERS = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n0\r\nX-Sum: 1\r\nX-Other: two\r\n\r\n")
CLOSE_DELIM = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close"
INFO = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + OK
LYING = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"
JUNK_CHUNK = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n"

SEEDS = {
    "get": seed(0, 0, Client().req(1), OK),
    "get_h1_upgrade": seed(FE_H1, 0, Client().req(1), OK),
    "no_preface": seed(NO_PREFACE, 0, Client().raw(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
                       .frame(SettingsFrame(0)).req(1), OK),
    "post_clen": seed(0, 0x11, Client().req(1, "/p", "POST", [("content-length", "5")], end=False)
                      .data(1, b"hello"), OK),
    "post_chunked": seed(0, 0x22, Client().req(1, "/p", "POST", end=False)
                         .data(1, b"hel", end=False).data(1, b"lo"), CHUNKED),
    "post_trailers": seed(0, 0, Client().req(1, "/p", "POST", end=False).data(1, b"body", end=False)
                          .headers(1, [("x-trailer", "t")], end=True), TRAILERS),
    "post_buffered_deny": seed(FE_BUF, 0x10, Client().req(1, "/b", "POST", [("content-length", "9")],
                                                          end=False).data(1, b"deny this"), OK),
    "many_streams": seed(0, 0x33, Client().req(1, "/a").req(3, "/b").req(5, "/close")
                         .req(7, "/c").req(9, "/d").req(11, "/local"),
                         OK + OK, CHUNKED, OK, OK),
    "rst_stream": seed(0, 0x01, Client().req(1, "/slow").frame(RstStreamFrame(1, 8))
                       .req(3).frame(RstStreamFrame(3, 0)), OK, OK),
    "rapid_reset": seed(0, 0, Client().req(1).frame(RstStreamFrame(1, 8)).req(3)
                        .frame(RstStreamFrame(3, 8)).req(5).frame(RstStreamFrame(5, 8))
                        .req(7).frame(RstStreamFrame(7, 8)).req(9).frame(RstStreamFrame(9, 8))
                        .req(11).frame(RstStreamFrame(11, 8))),
    "window_update": seed(0, 0x30, Client().frame(WindowUpdateFrame(0, 1 << 20)).req(1, "/big")
                          .frame(WindowUpdateFrame(1, 1 << 20)),
                          b"HTTP/1.1 200 OK\r\nContent-Length: 6000\r\n\r\n" + b"y" * 6000),
    "settings": seed(NO_SETTINGS, 0, Client().frame(SettingsFrame(0, settings={
        SettingsFrame.HEADER_TABLE_SIZE: 0, SettingsFrame.INITIAL_WINDOW_SIZE: 10,
        SettingsFrame.MAX_FRAME_SIZE: 16384, SettingsFrame.ENABLE_PUSH: 0}))
        .frame(SettingsFrame(0, flags=["ACK"])).req(1), CHUNKED),
    "ping": seed(0, 0, Client().frame(PingFrame(0, b"12345678")).req(1)
                 .frame(PingFrame(0, b"abcdefgh")), OK),
    "continuation": seed(0, 0, Client().req(1, "/cont", extra=[("x-long", "v" * 40)], split=7), OK),
    "priority": seed(0, 0, Client().frame(PriorityFrame(3, depends_on=1, stream_weight=16))
                     .req(1).req(5, "/close"), OK, CHUNKED),
    "goaway": seed(0, 0x02, Client().req(1).frame(GoAwayFrame(0, last_stream_id=0, error_code=0)),
                   OK),
    "cookies_host": seed(0, 0, Client().req(1, "/c", extra=[("cookie", "a=1"), ("cookie", "b=2"),
                                                            ("host", "other")]), OK),
    "connect": seed(0, 0x11, Client().headers(1, [(":method", "CONNECT"), (":authority", "x:443")],
                                              end=False).data(1, b"tunnel", end=True),
                    b"HTTP/1.1 200 OK\r\n\r\nback"),
    "res_chunked": seed(0, 0x20, Client().req(1), CHUNKED),
    "res_trailers": seed(0, 0, Client().req(1), TRAILERS),
    "res_close_delimited": seed(SRV_CLOSE, 0, Client().req(1), CLOSE_DELIM),
    "res_1xx": seed(0, 0, Client().req(1, "/u", "POST", [("expect", "100-continue"),
                                                          ("content-length", "2")], end=False)
                    .data(1, b"hi"), INFO),
    "res_lying_length": seed(SRV_CLOSE, 0, Client().req(1).req(3), LYING, OK),
    "res_junk_chunk": seed(0, 0, Client().req(1), JUNK_CHUNK),
    "res_early_close": seed(SRV_CLOSE | T_1S, 0x20, Client().req(1),
                            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel"),
    "res_compressed": seed(0, 0x40, Client().req(1, "/close", extra=[("accept-encoding", "gzip")]),
                           b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n"
                           b"\r\nabcdefghijklmnopqrstuvwxyz"),
    "res_101": seed(0, 0, Client().req(1), b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"),
    "res_204_304": seed(0, 0, Client().req(1).req(3, method="HEAD"),
                        b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\n"
                        b"Content-Length: 5\r\n\r\n"),
    "timeouts": seed(CLI_SHUT | T_3S, 0x05, Client().req(1), b""),
    # found by fuzz_h2 (fixed): the client leaving while its stream waits
    # freed the connection under the stream (use after free)
    "client_fin_mid_request": seed(CLI_SHUT, 0, Client().req(1), b""),
    # a first stream id of 2^31-3: a billion lookups at the close
    "high_stream_id": seed(0, 0, Client().req(0x7ffffffd)),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(SEEDS), OUT))
