#!/usr/bin/env python3
"""A fault-injecting HTTP proxy in front of the S3 server of t/s3.bats.

usage: s3-fault.py PORT UPSTREAM [--503 N] [--die-after-gets N] [--cut-puts-after N]
                   [--replace KEY FILE] [--slow-ranges SECONDS]

Requests are forwarded as they came (their signature covers the Host header, kept), except:
--503 N               the first N GETs answered 503 SlowDown
--die-after-gets N    after N GETs have been answered, the proxy stops (the server is gone)
--cut-puts-after N    after N PUTs, every PUT's connection is dropped before any answer
--replace KEY FILE    the first GET of KEY is answered with the object as it was, and the object
                      replaced by FILE (uploaded with curl through the upstream) before any
                      other GET of KEY reaches the upstream
--slow-ranges S       every ranged GET answered S seconds late (progress is seen to move)
GET /ping answers 200 (the helper waits for it).  Each request is logged on stderr as "METHOD PATH",
and each GET answered with a body as "sent N PATH" after it (N its bytes: what a reader fetched)."""
import http.client
import http.server
import os
import subprocess
import sys
import threading
import time
import urllib.parse

port, upstream = int(sys.argv[1]), urllib.parse.urlparse(sys.argv[2])
opts = sys.argv[3:]
def opt(name, n=1):
    if name in opts:
        i = opts.index(name)
        return opts[i + 1:i + 1 + n]
    return None
fail503 = int((opt("--503") or ["0"])[0])
die_after = int((opt("--die-after-gets") or ["-1"])[0])
cut_after = int((opt("--cut-puts-after") or ["-1"])[0])
replace = opt("--replace", 2)
slow = float((opt("--slow-ranges") or ["0"])[0])
lock = threading.Lock()
replace_lock = threading.Lock()
gets = puts = 0
replaced = False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path))

    def forward(self):
        global gets, puts, replaced
        if self.path == "/ping":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        with lock:
            if self.command == "GET":
                gets += 1
                g = gets
            if self.command == "PUT":
                puts += 1
                p = puts
        if self.command == "GET" and g <= fail503:
            msg = b"<?xml version='1.0'?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            self.send_response(503)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        if self.command == "GET" and slow and self.headers.get("Range"):
            time.sleep(slow)
        if self.command == "PUT" and cut_after >= 0 and p > cut_after:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        swap = replace and self.command == "GET" and self.path.split("?")[0] == "/" + replace[0]
        if swap:
            replace_lock.acquire()
        try:
            c = http.client.HTTPConnection(upstream.hostname, upstream.port)
            headers = {k: v for k, v in self.headers.items()}
            c.request(self.command, self.path, body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
            if swap and not replaced:
                replaced = True
                subprocess.run(["curl", "-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
                                os.environ["AWS_ACCESS_KEY_ID"] + ":" + os.environ["AWS_SECRET_ACCESS_KEY"],
                                "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-T", replace[1], "-o", "/dev/null",
                                sys.argv[2] + "/" + replace[0]], check=True)
        finally:
            if swap:
                replace_lock.release()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        # a HEAD's Content-Length is the object's size, passed on as it came
        self.send_header("Content-Length", r.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()
        if self.command == "GET" and r.status // 100 == 2:
            sys.stderr.write("sent %d %s\n" % (len(data), self.path.split("?")[0]))
            sys.stderr.flush()
        if self.command == "GET" and die_after >= 0 and g >= die_after:
            sys.stderr.write("stopping after %d GETs\n" % g)
            sys.stderr.flush()
            os._exit(0)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = forward


http.server.ThreadingHTTPServer.allow_reuse_address = True
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
