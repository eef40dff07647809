#!/usr/bin/env python3
"""The client of tests/scaleout/run, run in the client's network namespace:
"load" sends GETs on new connections for a while with a few workers and
writes one JSON line per request (start, end, status or error, the node
that answered); "get" sends one and prints that line."""
import argparse
import json
import socket
import sys
import threading
import time


def one(vip, port, source, timeout):
    r = {"start": time.time()}
    try:
        s = socket.socket()
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect((vip, port))
        s.sendall(b"GET / HTTP/1.1\r\nHost: www\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        head = data.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
        lines = head.split("\r\n")
        r["status"] = int(lines[0].split()[1])
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "x-node":
                r["node"] = v.strip()
    except (OSError, ValueError, IndexError) as e:
        r["error"] = type(e).__name__ + ": " + str(e)
    r["end"] = time.time()
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["load", "get"])
    ap.add_argument("--vip", required=True)
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--source", required=True)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--duration", type=float, default=8.0)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.mode == "get":
        print(json.dumps(one(a.vip, a.port, a.source, a.timeout)))
        return 0
    results, lock = [], threading.Lock()
    stop = time.time() + a.duration

    def worker():
        while time.time() < stop:
            r = one(a.vip, a.port, a.source, a.timeout)
            with lock:
                results.append(r)

    threads = [threading.Thread(target=worker) for _ in range(a.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(a.out, "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
