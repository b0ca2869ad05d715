#!/usr/bin/env python3
"""A recording HTTP proxy for `flatcache-bench matrix`: forwards every request to the
homeserver given as the first argument and appends it to the log file given as the
second (one JSON object a line: method, path with query, headers, body). Listens on
127.0.0.1 on a free port and prints that port as its first line. Stops on SIGTERM."""
import base64
import http.client
import http.server
import json
import sys
import threading
import urllib.parse

upstream = urllib.parse.urlsplit(sys.argv[1])
log = open(sys.argv[2], "a", encoding="utf-8")
lock = threading.Lock()
local = threading.local()


def connection():
    if getattr(local, "conn", None) is None:
        local.conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=120)
    return local.conn


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
        with lock:
            log.write(json.dumps({"method": self.command, "path": self.path, "headers": headers,
                                  "body": base64.b64encode(body).decode()}) + "\n")
            log.flush()
        for attempt in range(2):
            try:
                conn = connection()
                conn.request(self.command, self.path, body=body or None, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                break
            except (http.client.HTTPException, OSError):
                local.conn = None
                if attempt == 1:
                    self.send_error(502)
                    return
        try:
            self.send_response(answer.status)
            for key, value in answer.getheaders():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a long poll cancelled at exit)

    do_GET = do_POST = do_PUT = do_DELETE = forward

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
