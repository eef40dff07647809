"""A small, independent implementation of HAProxy's peers protocol 2.1 (the
wire format of peers.txt and peers-v2.0.txt) for tests/peers/run: it plays a
remote peer against ./sluice or haproxy, decodes what they send and sends
hand-made (or broken) messages. Written from the protocol documents."""
import socket
import struct
import time

# message classes and types
C_CTRL, C_ERR, C_STKT = 0, 1, 10
CTRL_RESYNC_REQ, CTRL_RESYNC_FIN, CTRL_RESYNC_PART, CTRL_RESYNC_CONFIRM, CTRL_HEARTBEAT = range(5)
T_UPDATE, T_INCUPDATE, T_DEFINE, T_SWITCH, T_ACK, T_UPDATE_TIMED, T_INCUPDATE_TIMED = range(128, 135)

KEY_SINT, KEY_IPV4, KEY_IPV6, KEY_STR, KEY_BIN = 2, 4, 5, 6, 7

# data types: bit number -> (name, kind); kinds: 'u' counter, 'f' frequency
# counter, 'd' dictionary entry, 'au'/'af' arrays
DT = {
    0: ("server_id", "u"), 1: ("gpt0", "u"), 2: ("gpc0", "u"), 3: ("gpc0_rate", "f"),
    4: ("conn_cnt", "u"), 5: ("conn_rate", "f"), 6: ("conn_cur", "u"),
    7: ("sess_cnt", "u"), 8: ("sess_rate", "f"), 9: ("http_req_cnt", "u"),
    10: ("http_req_rate", "f"), 11: ("http_err_cnt", "u"), 12: ("http_err_rate", "f"),
    13: ("bytes_in_cnt", "u"), 14: ("bytes_in_rate", "f"), 15: ("bytes_out_cnt", "u"),
    16: ("bytes_out_rate", "f"), 17: ("gpc1", "u"), 18: ("gpc1_rate", "f"),
    19: ("server_key", "d"), 20: ("http_fail_cnt", "u"), 21: ("http_fail_rate", "f"),
    22: ("gpt", "au"), 23: ("gpc", "au"), 24: ("gpc_rate", "af"),
}
DT_BY_NAME = {v[0]: k for k, v in DT.items()}


def enc(v):
    """The protocol's variable-length integer."""
    if v < 0xf0:
        return bytes([v])
    out = [(v | 0xf0) & 0xff]
    v = (v - 0xf0) >> 4
    while v >= 0x80:
        out.append((v | 0x80) & 0xff)
        v = (v - 0x80) >> 7
    out.append(v)
    return bytes(out)


def dec(b, i):
    """Decodes an integer at b[i]: (value, next index); raises IndexError."""
    v = b[i]
    i += 1
    if v < 0xf0:
        return v, i
    shift = 4
    while True:
        c = b[i]
        i += 1
        v += c << shift
        shift += 7
        if c < 0x80:
            return v, i


def msg(cls, typ, body=b""):
    if typ >= 128:
        return bytes([cls, typ]) + enc(len(body)) + body
    return bytes([cls, typ])


class Table:
    """What a definition message says of a table."""

    def __init__(self, name, ktype, klen, dtypes, expire=0, periods=None, nelem=None, tid=1):
        self.name, self.ktype, self.klen = name, ktype, klen
        self.dtypes = sorted(dtypes)  # bit numbers
        self.expire = expire
        self.periods = periods or {}  # bit -> ms
        self.nelem = nelem or {}      # bit -> array size
        self.tid = tid

    def define(self):
        bits = 0
        for d in self.dtypes:
            bits |= 1 << d
        b = enc(self.tid) + enc(len(self.name)) + self.name.encode() + enc(self.ktype) \
            + enc(self.klen) + enc(bits) + enc(self.expire)
        for d in self.dtypes:
            kind = DT[d][1]
            if kind == "f":
                b += enc(d) + enc(self.periods.get(d, 1000))
            elif kind in ("au", "af"):
                b += enc(d) + enc(self.nelem.get(d, 1))
                if kind == "af":
                    b += enc(self.periods.get(d, 1000))
        return msg(C_STKT, T_DEFINE, b)

    def key_bytes(self, key):
        if self.ktype == KEY_STR:
            k = key.encode() if isinstance(key, str) else key
            return enc(len(k)) + k
        if self.ktype == KEY_SINT:
            return struct.pack(">I", key)
        if self.ktype == KEY_IPV4:
            return socket.inet_aton(key)
        if self.ktype == KEY_IPV6:
            return socket.inet_pton(socket.AF_INET6, key)
        k = key if isinstance(key, bytes) else key.encode()
        return k + b"\0" * (self.klen - len(k))

    def update(self, key, values, upd_id=None, expire=None):
        """An update (incremental when upd_id is None; timed with expire):
        values maps a data name to an int, or (elapsed, curr, prev) for a
        frequency counter; missing values are 0."""
        b = b""
        if upd_id is not None:
            b += struct.pack(">I", upd_id)
        if expire is not None:
            b += struct.pack(">I", expire)
        b += self.key_bytes(key)
        for d in self.dtypes:
            name, kind = DT[d]
            v = values.get(name, 0)
            if kind == "u":
                b += enc(v)
            elif kind == "f":
                e, c, p = v if isinstance(v, tuple) else (0, v, 0)
                b += enc(e) + enc(c) + enc(p)
            else:
                raise ValueError("no encoder for " + name)
        if expire is None:
            t = T_UPDATE if upd_id is not None else T_INCUPDATE
        else:
            t = T_UPDATE_TIMED if upd_id is not None else T_INCUPDATE_TIMED
        return msg(C_STKT, t, b)


class Peer:
    """One end of a peer session over a socket, after or before the hello."""

    def __init__(self, sock):
        self.s = sock
        self.s.settimeout(0.5)
        self.buf = b""
        self.tables = {}       # sender's table id -> dict(name, ktype, klen, dtypes...)
        self.cur = None        # table the updates are for
        self.last_id = 0
        self.entries = {}      # (table name, key) -> {data name: value}
        self.expires = {}      # (table name, key) -> expire of the last timed update
        self.ctrl = []         # control messages received, in order
        self.errors = []       # error messages received
        self.acks = []         # (table id, update id)
        self.updates = 0
        self.closed = False
        self.log = []          # every message, decoded

    @classmethod
    def connect(cls, port, remote, local, version="2.1", pid=4242, host="127.0.0.1"):
        s = socket.create_connection((host, port), timeout=5)
        p = cls(s)
        p.send(("HAProxyS %s\n%s\n%s %d 0\n" % (version, remote, local, pid)).encode())
        return p

    def send(self, data):
        self.s.sendall(data)

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass

    def _fill(self, limit):
        end = time.time() + limit
        while time.time() < end:
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                return False
            except OSError:
                self.closed = True
                return False
            if not d:
                self.closed = True
                return False
            self.buf += d
            return True
        return False

    def read_line(self, limit=5.0):
        end = time.time() + limit
        while b"\n" not in self.buf:
            if self.closed or time.time() > end:
                return None
            self._fill(0.5)
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace")

    def read_hello(self, limit=5.0):
        return [self.read_line(limit) for _ in range(3)]

    def pump(self, limit=0.5, until=None, answer=True):
        """Reads and decodes messages for up to <limit> s, or until
        until(self) is true; answers heartbeats' absence with our own and
        a finished/partial with a confirm when <answer>. Returns until()."""
        end = time.time() + limit
        last_hb = time.time()
        while True:
            self._decode_all(answer)
            if until and until(self):
                return True
            if self.closed or time.time() > end:
                return bool(until and until(self))
            if answer and time.time() - last_hb > 1.0:
                try:
                    self.send(msg(C_CTRL, CTRL_HEARTBEAT))
                except OSError:
                    self.closed = True
                last_hb = time.time()
            self._fill(min(0.2, max(0.01, end - time.time())))

    def _decode_all(self, answer):
        while len(self.buf) >= 2:
            cls, typ = self.buf[0], self.buf[1]
            if typ < 128:
                body, n = b"", 2
            else:
                try:
                    ln, i = dec(self.buf, 2)
                except IndexError:
                    return
                if len(self.buf) < i + ln:
                    return
                body, n = self.buf[i:i + ln], i + ln
            self.buf = self.buf[n:]
            self._handle(cls, typ, body, answer)

    def _handle(self, cls, typ, body, answer):
        if cls == C_CTRL:
            self.log.append(("ctrl", typ))
            if typ != CTRL_HEARTBEAT:
                self.ctrl.append(typ)
            if answer and typ in (CTRL_RESYNC_FIN, CTRL_RESYNC_PART):
                self.send(msg(C_CTRL, CTRL_RESYNC_CONFIRM))
            return
        if cls == C_ERR:
            self.log.append(("error", typ))
            self.errors.append(typ)
            return
        if cls != C_STKT:
            self.log.append(("class?", cls, typ))
            return
        if typ == T_DEFINE:
            tid, i = dec(body, 0)
            nl, i = dec(body, i)
            name = body[i:i + nl].decode()
            i += nl
            kt, i = dec(body, i)
            kl, i = dec(body, i)
            bits, i = dec(body, i)
            exp, i = dec(body, i)
            t = {"name": name, "ktype": kt, "klen": kl, "bits": bits, "expire": exp,
                 "periods": {}, "nelem": {}}
            dts = [d for d in range(64) if bits & (1 << d)]
            for d in dts:
                kind = DT.get(d, ("?", "?"))[1]
                if kind == "f":
                    dd, i = dec(body, i)
                    t["periods"][dd], i = dec(body, i)
                elif kind in ("au", "af"):
                    dd, i = dec(body, i)
                    t["nelem"][dd], i = dec(body, i)
                    if kind == "af":
                        t["periods"][dd], i = dec(body, i)
            self.tables[tid] = t
            self.cur = t
            self.cur["id"] = tid
            self.log.append(("define", tid, name))
            return
        if typ == T_SWITCH:
            tid, _ = dec(body, 0)
            self.cur = self.tables.get(tid)
            self.log.append(("switch", tid))
            return
        if typ == T_ACK:
            tid, i = dec(body, 0)
            (uid,) = struct.unpack(">I", body[i:i + 4])
            self.acks.append((tid, uid))
            self.log.append(("ack", tid, uid))
            return
        if typ in (T_UPDATE, T_INCUPDATE, T_UPDATE_TIMED, T_INCUPDATE_TIMED):
            t = self.cur
            i = 0
            if typ in (T_UPDATE, T_UPDATE_TIMED):
                (self.last_id,) = struct.unpack(">I", body[0:4])
                i = 4
            else:
                self.last_id += 1
            exp = None
            if typ in (T_UPDATE_TIMED, T_INCUPDATE_TIMED):
                (exp,) = struct.unpack(">I", body[i:i + 4])
                i += 4
            kt = t["ktype"]
            if kt == KEY_STR:
                kl, i = dec(body, i)
                key = body[i:i + kl].decode(errors="replace")
                i += kl
            elif kt == KEY_SINT:
                (key,) = struct.unpack(">I", body[i:i + 4])
                i += 4
            elif kt == KEY_IPV4:
                key = socket.inet_ntoa(body[i:i + 4])
                i += 4
            elif kt == KEY_IPV6:
                key = socket.inet_ntop(socket.AF_INET6, body[i:i + 16])
                i += 16
            else:
                key = body[i:i + t["klen"]].rstrip(b"\0")
                i += t["klen"]
            vals = {}
            for d in range(64):
                if not t["bits"] & (1 << d):
                    continue
                name, kind = DT.get(d, ("?", "?"))
                if kind == "u":
                    vals[name], i = dec(body, i)
                elif kind == "f":
                    e, i = dec(body, i)
                    c, i = dec(body, i)
                    p, i = dec(body, i)
                    vals[name] = (e, c, p)
                elif kind == "d":
                    ln, i = dec(body, i)
                    i += ln
                elif kind == "au":
                    vals[name] = []
                    for _ in range(t["nelem"][d]):
                        v, i = dec(body, i)
                        vals[name].append(v)
                elif kind == "af":
                    vals[name] = []
                    for _ in range(t["nelem"][d]):
                        e, i = dec(body, i)
                        c, i = dec(body, i)
                        p, i = dec(body, i)
                        vals[name].append((e, c, p))
            self.entries[(t["name"], key)] = vals
            self.expires[(t["name"], key)] = exp
            self.updates += 1
            self.log.append(("update", t["name"], key, self.last_id))
            return
        self.log.append(("stkt?", typ))

    def ack(self, tid, uid):
        self.send(msg(C_STKT, T_ACK, enc(tid) + struct.pack(">I", uid)))


def rate_value(v, period):
    """What a received (elapsed, curr, prev) frequency counter reads as now."""
    e, c, p = v
    if e >= 2 * period:
        return 0
    if e >= period:
        return c * (2 * period - e) // period
    return c + p * (period - e) // period
