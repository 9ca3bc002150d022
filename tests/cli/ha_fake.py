#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for one controller of an HA cluster, for the clients' tests while the real one is
being built: a leader that answers the few calls the tests make, a follower that redirects every
write to the leader (307, Location and X-Mrcfab-Leader, as the controller's contract says) and
serves reads itself, or a controller without a leader (503 "no leader", Retry-After: 1). It logs
"port N (http)" on stderr as the daemons do, and every request it gets to --log as
'NAME METHOD PATH BODY'."""
import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None


def cluster_doc():
    return {
        "self": {"name": args.name, "url": args.self_url, "role": args.mode if args.mode != "noleader" else "follower"},
        "leader": None if args.mode == "noleader" else {"name": "c1", "url": args.leader or args.self_url, "epoch": 4},
        "members": [
            {"name": "c1", "url": args.leader or args.self_url, "role": "leader"},
            {"name": "c2", "url": "http://127.0.0.1:1", "role": "follower"},
        ],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def reply(self, status, doc=None, headers=(), ctype="application/json"):
        body = b"" if doc is None else json.dumps(doc).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode() if n else ""
        with open(args.log, "a") as f:
            f.write(f"{args.name} {self.command} {self.path} {body}\n")
        if args.mode == "noleader":
            return self.reply(503, {"type": "about:blank", "title": "no leader", "status": 503,
                                    "detail": "no controller leads now"},
                              [("Retry-After", "1")], "application/problem+json")
        if args.mode == "follower" and self.command in ("POST", "PUT", "DELETE"):
            to = args.leader + self.path
            return self.reply(307, {"type": "about:blank", "title": "not the leader", "status": 307,
                                    "leader": args.leader},
                              [("Location", to), ("X-Mrcfab-Leader", args.leader)],
                              "application/problem+json")
        path = self.path.split("?")[0]
        if self.command == "GET" and path == "/api/v1/cluster":
            return self.reply(200, cluster_doc())
        if self.command == "GET" and path == "/api/v1/denylist":
            return self.reply(200, {"version": 3, "epoch": 4, "entries": []})
        if self.command == "POST" and path == "/api/v1/denylist":
            entry = json.loads(body)
            entry.update({"id": 42, "scope": "both", "active": True, "author": "op",
                          "created": "2026-12-01T00:00:00Z", "source": "operator"})
            return self.reply(201, entry)
        if self.command == "DELETE" and path.startswith("/api/v1/denylist/"):
            return self.reply(204)
        return self.reply(404, {"title": "not found", "status": 404, "detail": "no resource at " + path})

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["leader", "follower", "noleader"], required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--leader", default="", help="the leader's base URL a follower names; self: its own")
    p.add_argument("--listen", default="127.0.0.1")
    p.add_argument("--log", required=True)
    args = p.parse_args()
    srv = ThreadingHTTPServer((args.listen, 0), Handler)
    port = srv.server_address[1]
    args.self_url = f"http://127.0.0.1:{port}"
    if args.leader == "self":
        args.leader = args.self_url
    print(f"{args.name}: port {port} (http)", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
