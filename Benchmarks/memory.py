#!/usr/bin/env python3
"""Does memory come back? Resident memory of aasa-server (and, side by side, Debian's nginx and H2O)
when idle, at the peak of a burst, and some seconds after it, for three bursts:

  connections   10,000 keep-alive connections, each answered once, held, then closed
  https         wrk over TLS, 64 keep-alive connections, for --seconds
  handshakes    full TLS 1.3 handshakes (a fresh session each), for --seconds

The target: back within 2 MB of idle --settle seconds after each burst. Idle is measured once each server
has answered one request on each listener (so first-use code pages count as idle, not as left behind).

Usage: Benchmarks/memory.py [--settle 30] [--seconds 8] [--connections 10000] [--servers aasa-server,nginx,h2o]
                            [--baseline PATH]
Builds aasa-server in release mode as deployed. Loopback only; every burst is bounded in count and time.
"""
import argparse
import os
import resource
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve-vs-nginx.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

REQUEST = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"


def connection_burst(port, count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1000), hard))
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(REQUEST)
        sockets.append(s)
    for s in sockets:
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
    return sockets


def warm_up(port, tls):
    import ssl
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        connection = raw
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            connection = context.wrap_socket(raw, server_hostname="example.com")
        connection.sendall(REQUEST.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        while connection.recv(65536):
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--settle", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--servers", default="aasa-server,nginx,h2o")
    parser.add_argument("--baseline", help="an earlier aasa-server binary to measure beside this one")
    args = parser.parse_args()
    wanted = args.servers.split(",")
    servers, work = bench.start_servers(wanted, baseline=args.baseline, connections=args.connections + 100)
    rows = []
    try:
        # Idle is a server that has answered once on each listener: the code pages a first request
        # faults in stay resident (file-backed, shared with the page cache) and are not memory a burst
        # left behind.
        for server in servers.values():
            warm_up(server["port"], tls=False)
            warm_up(server["tls_port"], tls=True)
        time.sleep(1)
        idle = {name: bench.rss_mb(s["process"].pid, "VmRSS") for name, s in servers.items()}
        for burst in ("connections", "https", "handshakes"):
            peak, after = {}, {}
            for name, server in servers.items():
                pid = server["process"].pid
                if burst == "connections":
                    held = connection_burst(server["port"], args.connections)
                    peak[name] = bench.rss_mb(pid, "VmRSS")
                    for s in held:
                        s.close()
                elif burst == "https":
                    bench.run_wrk(server["tls_port"], args.seconds, scheme="https")
                    peak[name] = bench.rss_mb(pid, "VmRSS")
                else:
                    bench.run_handshakes(server["tls_port"], args.seconds)
                    peak[name] = bench.rss_mb(pid, "VmRSS")
            time.sleep(args.settle)
            for name, server in servers.items():
                after[name] = bench.rss_mb(server["process"].pid, "VmRSS")
            rows.append((burst, peak, after))
            print(f"  {burst}: " + ", ".join(f"{n} peak {peak[n]:.1f} after {after[n]:.1f}" for n in servers), file=sys.stderr)
    finally:
        bench.stop_servers(servers, work)
    print(f"\nRSS (MB, process tree): idle, at the end of each burst, and {args.settle} s after it\n")
    print("| burst | " + " | ".join(f"{n} peak | {n} after | {n} after − idle" for n in servers) + " |")
    print("|---|" + "---:|" * (3 * len(servers)))
    print("| idle | " + " | ".join(f"{idle[n]:.1f} | | " for n in servers) + " |")
    for burst, peak, after in rows:
        print(f"| {burst} | " + " | ".join(f"{peak[n]:.1f} | {after[n]:.1f} | {after[n] - idle[n]:+.1f}" for n in servers) + " |")


if __name__ == "__main__":
    main()
