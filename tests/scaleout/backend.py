#!/usr/bin/env python3
"""A backend of tests/scaleout/run, in its own network namespace: answers
every request 200 and writes the X-Forwarded-For it received (the client's
address, as the sluice node saw it) to a file, one per line."""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with open(sys.argv[3], "a") as f:
            f.write("%s %s\n" % (self.headers.get("X-Forwarded-For", "-"),
                                 self.client_address[0]))
        body = ("%s\n" % sys.argv[2]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


srv = http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Handler)
srv.daemon_threads = True
srv.serve_forever()
