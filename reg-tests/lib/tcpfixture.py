#!/usr/bin/env python3
"""TCP peers for sluice reg-tests that varnishtest cannot play itself.

  tcpfixture.py blackhole HOST PORT PIDFILE
      Listens on HOST:PORT with a full accept queue (backlog 0 plus one
      connection that is never accepted), so that the kernel drops further
      SYNs: a connect() to it neither succeeds nor fails, it hangs.

  tcpfixture.py halfclose-server HOST PORT PIDFILE OUTFILE
      Accepts one connection, reads one HTTP/1.1 request head, answers
      "last words", then shutdown(SHUT_WR) and records everything received
      afterwards, up to the peer's end of input, into OUTFILE.

  tcpfixture.py slow-sink HOST PORT PIDFILE DELAY
      Accepts one connection, waits DELAY seconds without reading, then
      reads everything up to the peer's end of input and answers
      "received N bytes".

All of them return once the socket listens (the work goes on in a child whose pid
is in PIDFILE) and the child exits by itself after 20 seconds at most.
"""
import os
import signal
import socket
import sys
import time

LIFETIME = 20.0


def listen(host, port, backlog):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, int(port)))
    s.listen(backlog)
    return s


def daemonize(pidfile):
    """Parent: returns after the child wrote its pid. Child: detached."""
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    with open(pidfile + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(pidfile + ".tmp", pidfile)
    signal.signal(signal.SIGALRM, lambda *a: os._exit(0))
    signal.alarm(int(LIFETIME))
    os.write(w, b"x")
    os.close(w)


def blackhole(host, port, pidfile):
    srv = listen(host, port, 0)
    filler = socket.create_connection((host, int(port)), timeout=2)
    daemonize(pidfile)
    time.sleep(LIFETIME)
    filler.close()
    srv.close()


def halfclose_server(host, port, pidfile, outfile):
    srv = listen(host, port, 8)
    daemonize(pidfile)
    conn, _ = srv.accept()
    conn.settimeout(LIFETIME)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nlast words")
    conn.shutdown(socket.SHUT_WR)
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            break
        rest += chunk
    with open(outfile + ".tmp", "wb") as f:
        f.write(b"first: " + head.split(b"\r\n")[0] + b"\n")
        f.write(b"after FIN: " + rest + b"\nEOF\n")
    os.rename(outfile + ".tmp", outfile)
    conn.close()
    srv.close()


def slow_sink(host, port, pidfile, delay):
    srv = listen(host, port, 8)
    daemonize(pidfile)
    conn, _ = srv.accept()
    conn.settimeout(LIFETIME)
    time.sleep(float(delay))
    n = 0
    try:
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            n += len(chunk)
        conn.sendall(b"received %d bytes\n" % n)
    except OSError:
        pass
    conn.close()
    srv.close()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "blackhole":
        blackhole(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "halfclose-server":
        halfclose_server(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "slow-sink":
        slow_sink(*sys.argv[2:])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
