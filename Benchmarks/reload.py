#!/usr/bin/env python3
"""Hot-reload cost: how long a 10,000-host config takes to reload, and how much serving throughput
remains while the config is reloaded once a second.

Method: the release build (Swift runtime static) pinned to CPU 0 with one event loop, wrk on CPU 1
(keep-alive, 64 connections); reloads through POST /reload on the admin listener, whose JSON answer
carries the time from reading the first file to the new snapshot in force. Steady and reloading runs
are interleaved; medians of --repetitions.

Usage: Benchmarks/reload.py [--seconds 8] [--repetitions 3] [--sites 5000]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import ROOT, free_port, release_binary  # noqa: E402


def config(sites, port, admin):
    entries = []
    for i in range(sites):
        entries.append({"hosts": [f"shop{i}.example.com", f"www.shop{i}.example.com"],
                        "applinks": {"formats": ["modern", "legacy"], "details": [{
                            "apps": ["shop", f"ABCDE12345.com.example.app{i}"],
                            "components": [{"/": "/admin/*", "exclude": True}, {"/": f"/product/{i}/*"},
                                           {"/": "/cart", "?": {"id": "?*"}}]}]},
                        "webcredentials": {"apps": ["shop"]}})
    entries.append({"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}})
    return {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": entries,
            "server": {"listen": [f"127.0.0.1:{port}"], "admin": f"127.0.0.1:{admin}", "threads": 1, "accessLog": False,
                       "reload": {"watch": False}}}


def reload(admin):
    request = urllib.request.Request(f"http://127.0.0.1:{admin}/reload", method="POST")
    return json.loads(urllib.request.urlopen(request, timeout=30).read())


def wrk(port, seconds):
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c64", f"-d{seconds}s", "-H", "Host: example.com",
                          f"http://127.0.0.1:{port}/.well-known/apple-app-site-association"],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return (float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            (int(errors.group(1)) if errors else 0) + (sum(map(int, socket_errors.groups())) if socket_errors else 0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--sites", type=int, default=5000)
    args = parser.parse_args()
    binary = release_binary()
    work = tempfile.mkdtemp(prefix="aasa-reload-")
    port, admin = free_port(), free_port()
    path = f"{work}/config.json"
    with open(path, "w") as f:
        json.dump(config(args.sites, port, admin), f)
    hosts = 2 * args.sites + 1
    server = subprocess.Popen(["taskset", "-c", "0", binary, "serve", "--config", path],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{admin}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        times = [reload(admin)["milliseconds"] for _ in range(5)]
        print(f"reload of a {hosts}-host config ({os.path.getsize(path) // 1024} KiB): "
              f"median {statistics.median(times)} ms of {times} (target < 200 ms)")

        steady, reloading, errors = [], [], 0
        for repetition in range(args.repetitions):
            for mode in (["steady", "reloading"] if repetition % 2 == 0 else ["reloading", "steady"]):
                stop = threading.Event()
                outcomes = []

                def reloader():
                    while not stop.wait(1.0):
                        outcomes.append(reload(admin)["result"])
                thread = threading.Thread(target=reloader) if mode == "reloading" else None
                if thread:
                    thread.start()
                rate, failed = wrk(port, args.seconds)
                stop.set()
                if thread:
                    thread.join()
                errors += failed
                (steady if mode == "steady" else reloading).append(rate)
                print(f"  rep {repetition + 1} {mode:9} {rate:9.0f} req/s, errors {failed}, reloads {len(outcomes)}",
                      file=sys.stderr)
        ratio = statistics.median(reloading) / statistics.median(steady)
        print(f"throughput while reloading once a second: {statistics.median(reloading):.0f} req/s vs "
              f"{statistics.median(steady):.0f} steady = {ratio * 100:.1f}% (target ≥ 95%); failed requests: {errors}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
