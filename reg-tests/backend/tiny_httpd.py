#!/usr/bin/env python3
# A tiny keep-alive HTTP/1.1 server for tests that kill a backend: answers
# every GET with 200 and its own name, after DELAY seconds (default 0).
# Usage: tiny_httpd.py NAME ADDR [DELAY] (ADDR: a unix socket path, or
# host:port); writes its pid to ADDR.pid (/tmp/tiny_httpd.PORT.pid) when
# ready.
import http.server
import os
import socketserver
import sys
import time

name, addr = sys.argv[1], sys.argv[2]
delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if delay:
            time.sleep(delay)
        body = name.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Srv", name)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if addr.startswith("/"):
    class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True
    if os.path.exists(addr):
        os.unlink(addr)
    srv = Server(addr, Handler)
    pidfile = addr + ".pid"
else:
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
    host, port = addr.rsplit(":", 1)
    srv = Server((host, int(port)), Handler)
    pidfile = "/tmp/tiny_httpd.%s.pid" % port
with open(pidfile, "w") as f:
    f.write("%d\n" % os.getpid())
srv.serve_forever()
