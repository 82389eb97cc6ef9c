#!/usr/bin/env python3
"""Instructions the server executes per request, counted by valgrind's callgrind: unlike CPU time
these repeat exactly for the same binary and inputs, so two builds (or two ideas) can be compared
on a noisy machine to within a fraction of a percent.

Each cell is measured as the difference between two runs of the server under callgrind, one with N
requests and one with 6N, divided by 5N: start-up and shutdown cancel out.

Cells: keep-alive (one connection, sequential requests), new connection (Connection: close, a
connection per request), HTTPS keep-alive, a full TLS 1.3 handshake + GET per connection, a ~101 KB
document over keep-alive, three link answers over keep-alive (docs/links.md): a desktop's 302, an
iPhone's landing page and a crawler's preview page (binaries without link support cannot run these),
and a desktop's click on stored short links (docs/short-links.md), every click recorded: on one link
again and again, and on 1,000 links in turn. Only user-space instructions are counted: the kernel's
share of a request (the system calls) is the same for every build that makes the same calls.

--without-click-recording adds a column: this checkout built with AASA_WITHOUT_CLICK_RECORDING, the
same server with the loops' click counting taken out, so the stored-link cells show what recording a
click costs the loop (the issue's goal: within 3 %).

Usage: Benchmarks/request-instructions.py [--requests 2000] [--binary PATH]... [--tests keep-alive,...]
                                          [--without-click-recording]
With no --binary, builds this checkout in release mode. Needs valgrind. Loopback only.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402

REQUEST = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"
CLOSE = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"


def read_response(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    while len(rest) < length:
        rest += sock.recv(65536)


def keep_alive(port, count, tls=False):
    sock = socket.create_connection(("127.0.0.1", port))
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        sock = context.wrap_socket(sock, server_hostname="example.com")
    for _ in range(count):
        sock.sendall(REQUEST)
        read_response(sock)
    sock.close()


def new_connections(port, count):
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(CLOSE)
            while sock.recv(65536):
                pass


def new_tls_connections(port, count):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    for _ in range(count):
        # A fresh SSLSocket without a session: a full handshake every time.
        with context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="example.com") as sock:
            sock.sendall(CLOSE)
            while sock.recv(65536):
                pass


def large_keep_alive(port, count):
    sock = socket.create_connection(("127.0.0.1", port))
    request = REQUEST.replace(b"example.com", b"large.example.com")
    for _ in range(count):
        sock.sendall(request)
        read_response(sock)
    sock.close()


IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
CRAWLER = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"


def link_keep_alive(port, count, agent):
    sock = socket.create_connection(("127.0.0.1", port))
    request = f"GET /p/42?utm_source=mail HTTP/1.1\r\nHost: go.example.com\r\nUser-Agent: {agent}\r\n\r\n".encode()
    for _ in range(count):
        sock.sendall(request)
        read_response(sock)
    sock.close()


def stored_links_keep_alive(port, count, links):
    sock = socket.create_connection(("127.0.0.1", port))
    for index in range(count):
        sock.sendall(f"GET /s{index % links} HTTP/1.1\r\nHost: go.example.com\r\nUser-Agent: {DESKTOP}\r\n\r\n".encode())
        read_response(sock)
    sock.close()


STORED_LINKS = 1000
LINK_SITE = {"hosts": ["go.example.com"],
             "links": {"app": "shop", "openHost": "open.example.com",
                       "rules": [{"/": "/admin/*", "exclude": True},
                                 {"/": "/p/*", "web": "https://shop.example.com/item/{1}",
                                  "preview": {"title": "Spring sale", "description": "Everything half price",
                                              "image": "https://cdn.example.com/p.png"}},
                                 {"/": "/*", "web": "https://shop.example.com{path}"}]}}
LINK_APPS = {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789, "name": "Example Shop",
                      "icon": "https://cdn.example.com/icon.png"}}

CELLS = {
    "keep-alive": lambda port, tls_port, n: keep_alive(port, n),
    "new connection": lambda port, tls_port, n: new_connections(port, n),
    "https keep-alive": lambda port, tls_port, n: keep_alive(tls_port, n, tls=True),
    "tls handshake": lambda port, tls_port, n: new_tls_connections(tls_port, n // 10),
    "101 KB keep-alive": lambda port, tls_port, n: large_keep_alive(port, n),
    "link desktop 302": lambda port, tls_port, n: link_keep_alive(port, n, DESKTOP),
    "link iphone landing": lambda port, tls_port, n: link_keep_alive(port, n, IPHONE),
    "link crawler preview": lambda port, tls_port, n: link_keep_alive(port, n, CRAWLER),
    "stored link 302 one link": lambda port, tls_port, n: stored_links_keep_alive(port, n, 1),
    "stored link 302 1000 links": lambda port, tls_port, n: stored_links_keep_alive(port, n, STORED_LINKS),
}
# Full handshakes are slow under valgrind: those cells run a tenth of the requests.
DIVISOR = {"tls handshake": 10}


def measure(binary, work, cell, count):
    port, tls_port = free_port(), free_port()
    config = f"{work}/config.json"
    sites = [{"hosts": ["example.com"], "file": "doc"}, {"hosts": ["large.example.com"], "file": "large"}]
    stored = cell.startswith("stored ")
    link = cell.startswith("link ") or stored
    link_site = dict(LINK_SITE, links=dict(LINK_SITE["links"], allow=["shop.example.com"])) if stored else LINK_SITE
    with open(config, "w") as f:
        json.dump({"version": 1, "sites": sites + ([link_site] if link else []), **({"apps": LINK_APPS} if link else {}),
                   "server": {"listen": [f"127.0.0.1:{port}", {"address": "127.0.0.1", "port": tls_port, "tls": True}],
                              "admin": "off", "threads": 1, "accessLog": False, "reload": {"watch": False}, "maxRequestsPerConnection": 1000000,
                              **({"stateDirectory": "state"} if stored else {}),
                              "certificates": [{"hosts": ["example.com", "large.example.com"] + (["go.example.com"] if link else []),
                                                "certificate": "tls/cert.pem", "key": "tls/key.pem"}]}}, f)
    if stored:
        # A fresh store each run, so both runs of a cell start from the same links and no counts.
        shutil.rmtree(f"{work}/state", ignore_errors=True)
        with open(f"{work}/links.jsonl", "w") as f:
            for index in range(STORED_LINKS):
                f.write(json.dumps({"domain": "go.example.com", "suffix": f"s{index}",
                                    "parameters": {"link": f"https://shop.example.com/item/{index}"}}) + "\n")
        subprocess.run([binary, "links", "import", f"{work}/links.jsonl", "--config", config], check=True, stdout=subprocess.DEVNULL)
    out = f"{work}/callgrind.out"
    # Swift seeds its hash tables per process: without a fixed seed, where dictionary entries collide
    # moves the counts between runs of the same binary by a few percent.
    process = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve", "--config", config],
                               stdout=subprocess.DEVNULL, stderr=open(f"{work}/server.log", "w"),
                               env=dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1"))
    deadline = time.time() + 60
    # Both listeners: under valgrind the TLS one may still be binding when the plain one answers.
    for listener in (port, tls_port):
        while True:
            try:
                socket.create_connection(("127.0.0.1", listener), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("server did not start under valgrind: " + open(f"{work}/server.log").read()[-2000:])
                time.sleep(0.2)
    CELLS[cell](port, tls_port, count)
    process.terminate()
    process.wait(timeout=120)
    with open(out) as f:
        text = f.read()
    return int(re.search(r"^summary: (\d+)", text, re.M).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--binary", action="append")
    parser.add_argument("--tests", default=",".join(CELLS))
    parser.add_argument("--without-click-recording", action="store_true",
                        help="add this checkout built without the loops' click counting (AASA_WITHOUT_CLICK_RECORDING)")
    parser.add_argument("--user-agent", help="send this User-Agent with every request (e.g. a browser's, or AASA-Bot/1.0.0 "
                        "to measure the cost of recording a fetch)")
    args = parser.parse_args()
    if args.user_agent:
        global REQUEST, CLOSE
        field = b"Host: example.com\r\nUser-Agent: " + args.user_agent.encode() + b"\r\n"
        REQUEST = REQUEST.replace(b"Host: example.com\r\n", field)
        CLOSE = CLOSE.replace(b"Host: example.com\r\n", field)
    work = tempfile.mkdtemp(prefix="aasa-instr-")
    atexit.register(shutil.rmtree, work, True)  # however the run ends
    # valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: measure copies without debug info.
    binaries = []
    names = args.binary or ["this checkout"]
    built = list(args.binary or [release_binary()])
    if args.without_click_recording:
        built.append(release_binary(defines=["AASA_WITHOUT_CLICK_RECORDING"]))
        names = names + ["without click recording"]
    for index, binary in enumerate(built):
        stripped = f"{work}/{index}-{os.path.basename(binary)}"
        subprocess.run(["strip", "--strip-debug", "-o", stripped, binary], check=True)
        binaries.append(stripped)
    document = json.dumps({"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"],
                           "components": [{"/": f"/c{i}/*"} for i in range(60)]}]}}, separators=(",", ":"))
    with open(f"{work}/doc", "w") as f:
        f.write(document)
    large = json.dumps({"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"],
                        "components": [{"/": f"/collection-{i}/*", "comment": f"collection {i} pages"} for i in range(1700)]}]}},
                       separators=(",", ":"))
    with open(f"{work}/large", "w") as f:
        f.write(large)
    subprocess.run([binaries[0], "dev-cert", "--host", "example.com", "--host", "large.example.com", "--host", "go.example.com",
                    "--out", f"{work}/tls"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("| cell | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(binaries))
    for cell in args.tests.split(","):
        row = []
        for binary in binaries:
            small = measure(binary, work, cell, args.requests)
            many = measure(binary, work, cell, args.requests * 6)
            row.append((many - small) / (args.requests * 5 / DIVISOR.get(cell, 1)))
        print(f"| {cell}, instructions/request | " + " | ".join(f"{value:,.0f}" for value in row) + " |", flush=True)


if __name__ == "__main__":
    main()
