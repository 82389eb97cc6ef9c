#!/usr/bin/env python3
"""Fetch records at scale: what recording costs in memory and what the answers cost in time.

Starts the release build on a config of --hosts hosts (scale.py's shape: one small site per two hosts),
with a state directory, waits until it serves and settles, then has "Apple's CDN" (User-Agent
AASA-Bot/1.0.0) fetch --fetched distinct hosts, each --repeat times, over keep-alive connections. It
reports resident memory before and after (settled), the bytes in the state directory, and how long the
admin listener takes for /status (every recorded host), /status/<host>, the console's first page, a
console search that matches nothing (a scan of every host) and a host page. Loopback only; every wait
is bounded.

With --wildcard N it measures the other bound instead: one wildcard site, N made-up subdomains fetched
(a flood, or a link service's customers), which server.fetchHostsPerWildcard (default 10,000) keeps
from growing memory past that many recorded hosts.

Usage: Benchmarks/fetch-records.py [--hosts 1000000] [--fetched 10000] [--repeat 1] [--binary PATH]
       Benchmarks/fetch-records.py --wildcard 100000 [--binary PATH]
"""
import json
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("scale", os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale.py"))
scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scale)


def timed_get(url, timeout=120):
    started = time.monotonic()
    body = urllib.request.urlopen(url, timeout=timeout).read()
    return (time.monotonic() - started) * 1000, len(body)


def fetch_all(port, hosts, repeat):
    """Pipelined batches of 100, a connection per batch (a connection serves a bounded number of requests)."""
    for _ in range(repeat):
        for start in range(0, len(hosts), 100):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            batch = hosts[start:start + 100]
            request = b"".join(f"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: {host}\r\n"
                               f"User-Agent: AASA-Bot/1.0.0\r\n\r\n".encode() for host in batch)
            sock.sendall(request)
            answers = 0
            data = b""
            while answers < len(batch):
                chunk = sock.recv(1 << 20)
                if not chunk:
                    raise SystemExit("the server closed the connection")
                data += chunk
                answers = data.count(b"HTTP/1.1 200 OK")
            sock.close()


def state_size(directory):
    state = os.path.join(directory, "state")
    return sum(os.path.getsize(os.path.join(state, name)) for name in os.listdir(state))


def metric(admin, name):
    body = urllib.request.urlopen(f"http://127.0.0.1:{admin}/metrics", timeout=30).read().decode()
    for line in body.splitlines():
        if line.startswith(name + " "):
            return int(line.split()[-1])
    return None


def start(binary, directory):
    log = open(os.path.join(directory, "stderr.log"), "w")
    server = subprocess.Popen([binary, "serve", "--config", os.path.join(directory, "config.json")],
                              stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if "serving " in open(os.path.join(directory, "stderr.log")).read():
            return server
        time.sleep(0.2)
    server.terminate()
    raise SystemExit("the server did not start")


def wildcard_flood(binary, count):
    directory = tempfile.mkdtemp(prefix="aasa-fetch-records-")
    port, admin = free_port(), free_port()
    try:
        config = {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
                  "sites": [{"hosts": ["*.tenant.example.com", "shop.example.com"], "webcredentials": {"apps": ["shop"]}}],
                  "server": {"listen": [f"127.0.0.1:{port}"], "admin": f"127.0.0.1:{admin}", "accessLog": False,
                             "threads": 1, "stateDirectory": "state", "fetcherNetworks": {"apple": ["127.0.0.0/8"]}}}
        with open(os.path.join(directory, "config.json"), "w") as handle:
            json.dump(config, handle)
        server = start(binary, directory)
        try:
            time.sleep(3)
            before = scale.status_field(server.pid, "VmRSS")
            started = time.monotonic()
            fetch_all(port, [f"s{i}.tenant.example.com" for i in range(count)], 1)
            fetching = time.monotonic() - started
            label = 'aasa_fetch_record_hosts_dropped_total{bound="fetchHostsPerWildcard"}'
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (metric(admin, label) or 0) < count - 10_000:
                time.sleep(0.5)
            time.sleep(5)
            after = scale.status_field(server.pid, "VmRSS")
            recorded = len(json.loads(urllib.request.urlopen(f"http://127.0.0.1:{admin}/status", timeout=60).read())["hosts"])
            state_bytes = state_size(directory)
            print("| subdomains fetched | recorded | dropped (per wildcard) | RSS before | RSS after | growth | state directory |")
            print("|---:|---:|---:|---:|---:|---:|---:|")
            print(f"| {count:,} | {recorded:,} | {metric(admin, label):,} | {before:.0f} MB | {after:.0f} MB | {after - before:.0f} MB | "
                  f"{state_bytes / 1e6:.1f} MB |")
            print(f"\nfetching took {fetching:.1f} s")
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=1_000_000)
    parser.add_argument("--fetched", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--binary")
    parser.add_argument("--wildcard", type=int, help="fetch this many subdomains under one wildcard site instead")
    args = parser.parse_args()
    binary = args.binary or release_binary()
    if args.wildcard:
        wildcard_flood(binary, args.wildcard)
        return
    directory = tempfile.mkdtemp(prefix="aasa-fetch-records-")
    port, admin = free_port(), free_port()
    try:
        scale.make_config(directory, args.hosts, "single", 500, port, admin)
        config_path = os.path.join(directory, "config.json")
        with open(config_path) as handle:
            text = handle.read()
        with open(config_path, "w") as handle:
            handle.write(text.replace('"accessLog":false', '"accessLog":false,"stateDirectory":"state"'))
        server = start(binary, directory)
        try:
            time.sleep(8)  # start-up's freed pages go back to the kernel
            before = scale.status_field(server.pid, "VmRSS")
            hosts = [f"shop{i}.example.com" for i in range(args.fetched)]
            started = time.monotonic()
            fetch_all(port, hosts, args.repeat)
            fetching = time.monotonic() - started
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                body = urllib.request.urlopen(f"http://127.0.0.1:{admin}/status/shop{args.fetched - 1}.example.com").read()
                if b'"apple-cdn":{"last"' in body:
                    break
                time.sleep(0.2)
            time.sleep(8)
            after = scale.status_field(server.pid, "VmRSS")
            state_bytes = state_size(directory)
            timings = {}
            for name, path in [("/status (every recorded host)", "/status"), ("/status/<host>", "/status/shop5.example.com"),
                               ("console, first page", "/console"), ("console, search matching nothing", "/console?q=nomatch"),
                               ("console, host page", "/console/host/shop5.example.com")]:
                samples = [timed_get(f"http://127.0.0.1:{admin}{path}") for _ in range(5)]
                timings[name] = (sorted(s[0] for s in samples)[2], samples[0][1])
            print(f"| hosts | fetched hosts | fetches | RSS before | RSS after | per fetched host | state directory |")
            print(f"|---:|---:|---:|---:|---:|---:|---:|")
            print(f"| {args.hosts:,} | {args.fetched:,} | {args.fetched * args.repeat:,} | {before:.0f} MB | {after:.0f} MB | "
                  f"{(after - before) * 1024 * 1024 / args.fetched:.0f} B | {state_bytes / 1e6:.1f} MB |")
            print(f"\nfetching took {fetching:.1f} s\n")
            print("| admin request | median of 5 | bytes |")
            print("|---|---:|---:|")
            for name, (ms, size) in timings.items():
                print(f"| {name} | {ms:.0f} ms | {size:,} |")
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
