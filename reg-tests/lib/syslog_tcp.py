#!/usr/bin/env python3
"""A TCP syslog server for sluice reg-tests (RFC 6587 framing).

  syslog_tcp.py HOST PORT PIDFILE OUTFILE [octet|lf] [CLOSE_AFTER]

Listens on HOST:PORT (0: any port; the port is written to OUTFILE.port),
accepts connections one after the other and appends each message received
to OUTFILE, one per line, as "<conn number> <message>". With "octet" (the
default) a message is "<length> <bytes>", with "lf" a line. CLOSE_AFTER > 0:
each connection is closed after that many messages (the sender must come
back). Returns once listening (the work goes on in a child whose pid is in
PIDFILE); the child exits by itself after 20 seconds at most."""
import os
import socket
import sys
import time

host, port, pidfile, outfile = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
framing = sys.argv[5] if len(sys.argv) > 5 else "octet"
close_after = int(sys.argv[6]) if len(sys.argv) > 6 else 0

ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((host, port))
ls.listen(8)
open(outfile + ".port", "w").write("%d\n" % ls.getsockname()[1])
open(outfile, "w").close()
pid = os.fork()
if pid:
    open(pidfile, "w").write("%d\n" % pid)
    sys.exit(0)

end = time.time() + 20
ls.settimeout(1)
nconn = 0
while time.time() < end:
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    nconn += 1
    c.settimeout(1)
    buf = b""
    n = 0
    while time.time() < end:
        try:
            d = c.recv(65536)
        except socket.timeout:
            continue
        if not d:
            break
        buf += d
        msgs = []
        while True:
            if framing == "lf":
                if b"\n" not in buf:
                    break
                m, buf = buf.split(b"\n", 1)
                msgs.append(m)
            else:
                sp = buf.find(b" ")
                if sp < 0:
                    break
                ln = int(buf[:sp])
                if len(buf) < sp + 1 + ln:
                    break
                msgs.append(buf[sp + 1:sp + 1 + ln])
                buf = buf[sp + 1 + ln:]
        with open(outfile, "a") as f:
            for m in msgs:
                f.write("%d %s\n" % (nconn, m.decode(errors="replace")))
        n += len(msgs)
        if close_after and n >= close_after:
            break
    c.close()
