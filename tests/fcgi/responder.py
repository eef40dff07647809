"""A FastCGI responder for the tests (tests/fcgi/run): records over a
socket, written here (no library). It records what each request brought
(connection number, request id, BEGIN_REQUEST flags, params, stdin) and
answers according to the script name, some of them on purpose wrongly.

Behaviours (the last path segment of SCRIPT_NAME, or of REQUEST_URI when
SCRIPT_NAME is empty):
  echo        JSON of the params and stdin (its length, sha256 and, when
              small, itself) with Content-Type application/json
  big         ?n=N bytes of a repeating pattern, in STDOUT records of up to
              65535 bytes, without Content-Length (chunked on the HTTP side)
  clen        a Content-Length header and a body of that many bytes
  status      "Status: <code> Some Reason" from ?code=
  location    a Location header only (no Status)
  stderr      ?msg= written to STDERR, then an echo
  nohdr       a body with no blank line before the end (invalid CGI output)
  garbage     "Status: abc" (invalid)
  badversion  a record of version 2
  badtype     a record of an unknown type (sent back by a responder as
              UNKNOWN_TYPE would be harmless; this sends type 77 to us)
  badlen      a STDOUT record whose declared length exceeds what follows,
              then the connection is closed
  otherid     an END_REQUEST for request id + 100, then nothing
  closemid    half a record header, then the connection is closed
  overloaded  END_REQUEST with protocol status FCGI_OVERLOADED
  cantmpx     END_REQUEST with protocol status FCGI_CANT_MPX_CONN
  unknownrole END_REQUEST with protocol status FCGI_UNKNOWN_ROLE
  appfail     END_REQUEST with application status 3 and no output
  mpx         waits (bounded) until ?n= requests were open at once on its
              connection, then answers (each request in its own thread)
  slow        answers after ?ms= milliseconds
Anything else: echo.
"""
import hashlib
import json
import socket
import struct
import threading
import time
import urllib.parse

BEGIN, ABORT, END, PARAMS, STDIN, STDOUT, STDERR, DATA, GETV, GETV_RES, UNKNOWN = range(1, 12)
KEEP_CONN = 1


def rec(t, rid, content=b"", version=1, pad=None):
    if pad is None:
        pad = (8 - len(content) % 8) % 8
    return struct.pack(">BBHHBB", version, t, rid, len(content), pad, 0) + content + b"\0" * pad


def nv_len(n):
    return struct.pack(">B", n) if n < 128 else struct.pack(">I", n | 0x80000000)


def nv_encode(pairs):
    out = b""
    for k, v in pairs:
        k, v = k.encode("latin-1"), v.encode("latin-1")
        out += nv_len(len(k)) + nv_len(len(v)) + k + v
    return out


def nv_decode(b):
    out, i = [], 0
    while i < len(b):
        lens = []
        for _ in range(2):
            if b[i] & 0x80:
                lens.append(struct.unpack(">I", b[i:i + 4])[0] & 0x7fffffff)
                i += 4
            else:
                lens.append(b[i])
                i += 1
        k = b[i:i + lens[0]].decode("latin-1")
        i += lens[0]
        v = b[i:i + lens[1]].decode("latin-1")
        i += lens[1]
        out.append((k, v))
    return out


def stdout_records(rid, data):
    out = b""
    for i in range(0, len(data), 65535):
        out += rec(STDOUT, rid, data[i:i + 65535])
    return out


def end_request(rid, app=0, proto=0):
    return rec(END, rid, struct.pack(">IB3x", app, proto))


class Request:
    def __init__(self, rid, flags, cid):
        self.rid, self.flags, self.cid = rid, flags, cid
        self.params_raw = b""
        self.params = None
        self.stdin = b""
        self.stdin_done = False
        self.aborted = False

    def p(self, name, default=""):
        return dict(self.params or []).get(name, default)


class Responder:
    """Listens on 127.0.0.1:<port> (0: any free port: self.port), serves each
    connection in a thread. <mpxs>/<max_reqs> are what GET_VALUES reports;
    <values> False: GET_VALUES gets UNKNOWN_TYPE."""

    def __init__(self, port=0, mpxs=False, max_reqs=1, values=True):
        self.mpxs, self.max_reqs, self.values = mpxs, max_reqs, values
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.reqs = []          # every completed Request
        self.getvalues = []     # names asked by GET_VALUES, per query
        self.nconn = 0
        self.closed_conns = 0
        self.errors = []
        self.open = {}          # cid -> number of requests open on it
        self.peak = {}          # cid -> most requests open on it at once
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", port))
        self.ls.listen(128)
        self.port = self.ls.getsockname()[1]
        self.stopping = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def stop(self):
        self.stopping = True
        try:
            self.ls.close()
        except OSError:
            pass

    def accept_loop(self):
        while not self.stopping:
            try:
                s, _ = self.ls.accept()
            except OSError:
                return
            with self.lock:
                self.nconn += 1
                cid = self.nconn
            threading.Thread(target=self.serve, args=(s, cid), daemon=True).start()

    def matching(self, needle):
        with self.lock:
            return [r for r in self.reqs if needle in r.p("REQUEST_URI")]

    def serve(self, s, cid):
        wlock = threading.Lock()
        reqs = {}
        buf = b""
        s.settimeout(20)

        def send(b):
            with wlock:
                s.sendall(b)
        try:
            while True:
                while len(buf) < 8:
                    d = s.recv(65536)
                    if not d:
                        return
                    buf += d
                ver, t, rid, clen, plen, _ = struct.unpack(">BBHHBB", buf[:8])
                while len(buf) < 8 + clen + plen:
                    d = s.recv(65536)
                    if not d:
                        return
                    buf += d
                body = buf[8:8 + clen]
                buf = buf[8 + clen + plen:]
                if ver != 1:
                    raise ValueError("version %d" % ver)
                if t == GETV:
                    names = [k for k, _ in nv_decode(body)]
                    with self.lock:
                        self.getvalues.append(names)
                    if not self.values:
                        send(rec(UNKNOWN, 0, struct.pack(">B7x", GETV)))
                        continue
                    vals = {"FCGI_MAX_REQS": str(self.max_reqs),
                            "FCGI_MPXS_CONNS": "1" if self.mpxs else "0",
                            "FCGI_MAX_CONNS": "10"}
                    send(rec(GETV_RES, 0, nv_encode([(k, vals[k]) for k in names if k in vals])))
                elif t == BEGIN:
                    role, flags = struct.unpack(">HB5x", body)
                    r = Request(rid, flags, cid)
                    r.role = role
                    reqs[rid] = r
                    with self.lock:
                        self.open[cid] = self.open.get(cid, 0) + 1
                        self.peak[cid] = max(self.peak.get(cid, 0), self.open[cid])
                        self.cond.notify_all()
                elif t == ABORT:
                    r = reqs.pop(rid, None)
                    if r:
                        r.aborted = True
                        with self.lock:
                            self.open[cid] -= 1
                        send(end_request(rid, 0, 0))
                elif t == PARAMS:
                    r = reqs[rid]
                    if clen:
                        r.params_raw += body
                    else:
                        r.params = nv_decode(r.params_raw)
                elif t == STDIN:
                    r = reqs[rid]
                    if clen:
                        r.stdin += body
                    else:
                        r.stdin_done = True
                        del reqs[rid]
                        with self.lock:
                            self.reqs.append(r)
                        threading.Thread(target=self.answer, args=(r, send, s),
                                         daemon=True).start()
                else:
                    raise ValueError("record type %d" % t)
        except Exception as e:  # noqa: BLE001 - a test peer reports anything
            with self.lock:
                self.errors.append("conn %d: %r" % (cid, e))
        finally:
            with self.lock:
                self.closed_conns += 1
                self.cond.notify_all()
            try:
                s.close()
            except OSError:
                pass

    def answer(self, r, send, s):
        try:
            self.respond(r, send, s)
        except OSError:
            pass
        finally:
            with self.lock:
                self.open[r.cid] -= 1
            if not (r.flags & KEEP_CONN):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def respond(self, r, send, s):
        script = r.p("SCRIPT_NAME") or urllib.parse.urlsplit(r.p("REQUEST_URI")).path
        what = script.rstrip("/").rsplit("/", 1)[-1].split(".")[0]
        q = dict(urllib.parse.parse_qsl(r.p("QUERY_STRING")))
        rid = r.rid
        if what == "big":
            n = int(q.get("n", "100000"))
            pat = (b"0123456789abcdef" * (n // 16 + 1))[:n]
            send(stdout_records(rid, b"Content-Type: application/octet-stream\r\n\r\n"))
            for i in range(0, n, 40000):
                send(stdout_records(rid, pat[i:i + 40000]))
            send(rec(STDOUT, rid) + end_request(rid))
        elif what == "clen":
            body = b"x" * int(q.get("n", "10"))
            send(stdout_records(rid, b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                                % len(body) + body) + rec(STDOUT, rid) + end_request(rid))
        elif what == "status":
            code = q.get("code", "404")
            send(stdout_records(rid, ("Status: %s Some Reason\r\nContent-Type: text/plain\r\n"
                                      "X-App: yes\r\n\r\nstatus %s\n" % (code, code)).encode())
                 + rec(STDOUT, rid) + end_request(rid))
        elif what == "location":
            send(stdout_records(rid, b"Location: http://example.org/elsewhere\r\n\r\n")
                 + rec(STDOUT, rid) + end_request(rid))
        elif what == "stderr":
            send(rec(STDERR, rid, q.get("msg", "oops").encode()) + rec(STDERR, rid))
            self.echo(r, send)
        elif what == "nohdr":
            send(stdout_records(rid, b"Content-Type: text/plain\r\nno blank line") +
                 rec(STDOUT, rid) + end_request(rid))
        elif what == "garbage":
            send(stdout_records(rid, b"Status: abc\r\nContent-Type: text/plain\r\n\r\nhi\n") +
                 rec(STDOUT, rid) + end_request(rid))
        elif what == "badversion":
            send(rec(STDOUT, rid, b"Content-Type: text/plain\r\n\r\nhi\n", version=2))
            time.sleep(0.5)
        elif what == "badtype":
            send(rec(77, rid, b"what") + stdout_records(rid, b"Content-Type: text/plain\r\n\r\n"))
            time.sleep(0.5)
        elif what == "badlen":
            send(struct.pack(">BBHHBB", 1, STDOUT, rid, 5000, 0, 0) + b"Content-Type: te")
            s.shutdown(socket.SHUT_RDWR)
        elif what == "otherid":
            send(end_request(rid + 100))
            time.sleep(0.5)
        elif what == "closemid":
            send(rec(STDOUT, rid, b"Content-Type: text/plain\r\n\r\nhello")[:4])
            s.shutdown(socket.SHUT_RDWR)
        elif what in ("overloaded", "cantmpx", "unknownrole"):
            code = {"cantmpx": 1, "overloaded": 2, "unknownrole": 3}[what]
            send(end_request(rid, 0, code))
        elif what == "appfail":
            send(rec(STDOUT, rid) + end_request(rid, 3, 0))
        elif what == "mpx":
            n = int(q.get("n", "2"))
            deadline = time.time() + 10
            with self.lock:
                while self.peak.get(r.cid, 0) < n and time.time() < deadline:
                    self.cond.wait(0.1)
                seen = self.peak.get(r.cid, 0)
            body = ("conn %d open %d\n" % (r.cid, seen)).encode()
            send(stdout_records(rid, b"Content-Type: text/plain\r\n\r\n" + body) +
                 rec(STDOUT, rid) + end_request(rid))
        elif what == "slow":
            time.sleep(int(q.get("ms", "200")) / 1000.0)
            self.echo(r, send)
        else:
            self.echo(r, send)

    def echo(self, r, send):
        rid = r.rid
        doc = {"params": r.params, "cid": r.cid, "rid": rid, "flags": r.flags,
               "role": r.role, "stdin_len": len(r.stdin),
               "stdin_sha": hashlib.sha256(r.stdin).hexdigest()}
        if len(r.stdin) <= 4096:
            doc["stdin"] = r.stdin.decode("latin-1")
        body = json.dumps(doc).encode()
        send(stdout_records(rid, b"Content-Type: application/json\r\n\r\n" + body) +
             rec(STDOUT, rid) + end_request(rid))


if __name__ == "__main__":
    import sys
    rs = Responder(int(sys.argv[1]) if len(sys.argv) > 1 else 0,
                   mpxs="mpxs" in sys.argv, max_reqs=4 if "mpxs" in sys.argv else 1)
    print(rs.port, flush=True)
    while True:
        time.sleep(3600)
