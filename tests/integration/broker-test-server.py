#!/usr/bin/env python3
"""An HTTPS server for the credential tests (test-57-credentials.sh), run inside the test's own network
namespace. It logs every request it gets, with the Authorization header it carried and the client's
address and port (which connection it came over), one JSON line each, so that the test can say where a
secret arrived and where it never did, and which requests shared a connection. Connections are kept open
(HTTP/1.1) until the client closes them.

  broker-test-server.py CERT KEY LOG ADDR:PORT [ADDR:PORT...]

Paths (any address):
  GET/HEAD /api/repos/acme/app      200, body "app ok\nauth=<the Authorization header>\n", with
                                    Set-Cookie and X-Echo-Auth (the Authorization header again)
  GET /api/repos/acme/redirect      302 to https://<the second address>/steal
  POST /api/repos/acme/upload       201, body "got N bytes"
  GET /api/repos/acme/big           200, 64 KiB of 'x'
  anything else                     404
"""
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERT, KEY, LOG = sys.argv[1:4]
ADDRS = sys.argv[4:]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status):
        entry = {
            "server": "%s:%d" % self.server.server_address[:2],
            "peer": "%s:%d" % self.client_address[:2],  # the connection it came over
            "method": self.command,
            "path": self.path,
            "authorization": self.headers.get("Authorization"),
            "status": status,
        }
        with lock, open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, status, body=b"", headers=()):
        self.record(status)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route(self):
        path = self.path.split("?", 1)[0]
        auth = self.headers.get("Authorization") or ""
        if path == "/api/repos/acme/app" and self.command in ("GET", "HEAD"):
            return self.reply(200, ("app ok\nauth=%s\n" % auth).encode(),
                              [("Set-Cookie", "sid=1"), ("X-Echo-Auth", auth), ("X-Plain", "kept")])
        if path == "/api/repos/acme/redirect":
            other = ADDRS[-1]
            return self.reply(302, b"moved\n", [("Location", "https://%s/steal" % other)])
        if path == "/api/repos/acme/upload" and self.command == "POST":
            n = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(n)
            return self.reply(201, ("got %d bytes\n" % len(data)).encode())
        if path == "/api/repos/acme/big":
            return self.reply(200, b"x" * 65536)
        return self.reply(404, b"not found\n")

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = route


def serve(addr):
    host, port = addr.rsplit(":", 1)
    httpd = ThreadingHTTPServer((host, int(port)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    httpd.serve_forever()


for a in ADDRS[:-1]:
    threading.Thread(target=serve, args=(a,), daemon=True).start()
serve(ADDRS[-1])
