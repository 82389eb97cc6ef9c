#!/usr/bin/env python3
"""A deliberately broken web server for the `check` tests: each --mode gets one thing wrong the way real
deployments do. Listens on 127.0.0.1 (port 0 picks one), prints "PORT <n>" once ready, serves until
killed. With --cert/--key it speaks TLS. Loopback only."""
import argparse
import gzip
import json
import signal
import socket
import ssl
import threading

GOOD = json.dumps({"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/product/*"}]}]}},
                  separators=(",", ":")).encode()
OLD = json.dumps({"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/old/*"}]}]}},
                 separators=(",", ":")).encode()
WELL_KNOWN = "/.well-known/apple-app-site-association"
ASSET_LINKS = "/.well-known/assetlinks.json"
FINGERPRINT = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"


def statements(fingerprint):
    return json.dumps([{"relation": ["delegate_permission/common.handle_all_urls"],
                        "target": {"namespace": "android_app", "package_name": "com.example.shop",
                                   "sha256_cert_fingerprints": [fingerprint]}}]).encode()


def response(status, headers, body, head=False):
    reason = {200: "OK", 301: "Moved Permanently", 302: "Found", 403: "Forbidden", 404: "Not Found"}.get(status, "Status")
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers] + ["Connection: close", "", ""]
    return "\r\n".join(lines).encode() + (b"" if head else body)


def answer(mode, method, path, headers):
    head = method == "HEAD"
    agent = headers.get("user-agent", "")
    json_headers = lambda body: [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    if mode.startswith("cdn"):
        if not path.startswith("/a/v1/"):
            return response(404, [("Content-Length", "0")], b"")
        if mode == "cdn-failure":
            return response(404, [("Apple-Failure-Reason", "SSL error"), ("Apple-Failure-Details", "certificate has expired"),
                                  ("Content-Length", "0")], b"", head)
        return response(200, json_headers(OLD), OLD, head)
    if path == ASSET_LINKS:
        # Android's side, broken the usual ways: a redirect (never followed), lower-case fingerprints.
        if mode == "assetlinks-redirect":
            return response(301, [("Location", "https://www.example.com" + ASSET_LINKS), ("Content-Length", "0")], b"", head)
        if mode == "assetlinks-lowercase":
            body = statements(FINGERPRINT.lower())
            return response(200, json_headers(body), body, head)
        if mode == "assetlinks-good":
            body = statements(FINGERPRINT)
            return response(200, json_headers(body), body, head)
        if mode == "assetlinks-one-malformed":
            # The shop's statement is fine; a second one, for another app, has a lower-case fingerprint.
            good = json.loads(statements(FINGERPRINT))
            bad = json.loads(statements(FINGERPRINT.lower()))
            bad[0]["target"]["package_name"] = "com.example.beta"
            body = json.dumps(good + bad).encode()
            return response(200, json_headers(body), body, head)
    if mode == "catch-all":
        # A single-page app answering every path with its index page.
        body = b"<!doctype html><html><body><div id=app></div></body></html>"
        return response(200, [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))], body, head)
    if mode == "gzip-mislabelled" and path in (WELL_KNOWN, "/apple-app-site-association"):
        # The opposite: a plain file under a Content-Encoding: gzip header (a proxy rule adds it).
        return response(200, [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("Content-Length", str(len(GOOD)))],
                        GOOD, head)
    if mode == "gzip-unlabelled" and path in (WELL_KNOWN, "/apple-app-site-association"):
        # A pre-compressed file served as if it were plain: no Content-Encoding, on both AASA paths.
        body = gzip.compress(GOOD, mtime=0)  # the same bytes on every request, as a stored file would be
        return response(200, json_headers(body), body, head)
    if path != WELL_KNOWN:
        return response(404, [("Content-Type", "text/plain"), ("Content-Length", "9")], b"not found", head)
    if mode == "redirect":
        return response(301, [("Location", "https://www.example.com" + WELL_KNOWN), ("Content-Length", "0")], b"", head)
    if mode == "trailing-slash":
        return response(301, [("Location", WELL_KNOWN + "/"), ("Content-Length", "0")], b"", head)
    if mode == "html":
        body = b"<!doctype html><html><body><div id=app></div></body></html>"
        return response(200, [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))], body, head)
    if mode == "octet-stream":
        return response(200, [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(GOOD)))], GOOD, head)
    if mode == "ua-block" and agent.startswith("AASA-Bot"):
        return response(403, [("Content-Type", "text/plain"), ("Content-Length", "7")], b"blocked", head)
    if mode == "head-mismatch" and head:
        return response(404, [("Content-Length", "0")], b"", head)
    if mode == "bom":
        body = b"\xef\xbb\xbf" + GOOD
        return response(200, json_headers(body), body, head)
    if mode == "truncated":
        return response(200, [("Content-Type", "application/json"), ("Content-Length", str(len(GOOD) + 400))], GOOD, head)
    if mode == "gzip-oversized":
        components = [{"/": f"/collection-{i}/*", "comment": f"collection {i} pages in the catalogue"} for i in range(3000)]
        document = json.dumps({"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": components}]}}).encode()
        body = gzip.compress(document, mtime=0)
        return response(200, [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("Content-Length", str(len(body)))],
                        body, head)
    return response(200, json_headers(GOOD), GOOD, head)


def serve(connection, mode, context):
    try:
        if context:
            connection = context.wrap_socket(connection, server_side=True)
        connection.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return
            data += chunk
        if mode == "silent":
            threading.Event().wait(30)
            return
        head, _, _ = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        connection.sendall(answer(mode, method, path, headers))
    except (OSError, ssl.SSLError, ValueError):
        pass
    finally:
        try:
            connection.close()
        except OSError:
            pass


def main():
    # The test runner's threads block most signals and a spawned process inherits that mask: without
    # this, the SIGTERM that ends each test's server stays pending and the server outlives the tests.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="good")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection, args.mode, context), daemon=True).start()


if __name__ == "__main__":
    main()
