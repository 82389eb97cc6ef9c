#!/usr/bin/env python3
"""Fuzzes the admin console of the real release binary with random searches, page numbers and host
pages, over every config layout (one site per included file, many per file, wildcards, Android-only
sites) and sizes up to a million hosts. Every answer must be 200 or 404 (400 for a request the parser
refuses), never a 500 and never a closed server: the process must still be running and serving
documents at the end. Loopback only, bounded in requests and time.

Usage: Benchmarks/console-fuzz.py [--requests 300] [--large 1000000] [--seed 29] [--binary PATH]
"""
import argparse
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402

FINGERPRINT = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"


def site(index, layout):
    hosts = [f"go.c{index}.example.com", f"www.c{index}.example.com"]
    if layout == "wildcards" and index % 3 == 1:
        hosts[0] = f"*.w{index}.example.com"
    if layout == "android-only" and index % 2 == 1:
        return {"hosts": hosts, "android": ["shop"]}
    return {"hosts": hosts, "webcredentials": {"apps": ["shop"]}}


def write(path, value):
    with open(path, "w") as handle:
        json.dump(value, handle, separators=(",", ":"))


def make_config(directory, layout, sites, port, admin):
    apps = {"shop": {"apple": "ABCDE12345.com.example.shop",
                     "android": {"package": "com.example.shop", "sha256": [FINGERPRINT]}}}
    server = {"listen": [f"127.0.0.1:{port}"], "admin": f"127.0.0.1:{admin}", "threads": 1, "accessLog": False,
              "reload": {"watch": False}}
    config = {"version": 1, "apps": apps, "server": server, "sites": [], "include": ["sites.d/*.json"]}
    os.makedirs(os.path.join(directory, "sites.d"))
    per_file = 1 if layout in ("one-per-file", "android-only") else 997
    if layout == "many-per-file":
        config["sites"] = [site(index, layout) for index in range(min(3, sites))]
    start = len(config["sites"])
    for first in range(start, sites, per_file):
        chunk = [site(index, layout) for index in range(first, min(sites, first + per_file))]
        write(os.path.join(directory, "sites.d", f"t{first:08d}.json"), chunk[0] if per_file == 1 else chunk)
    write(os.path.join(directory, "config.json"), config)


def random_query(rng, sites):
    index = rng.randrange(sites)
    choices = [
        f"go.c{index}", f"c{index}.", f"www.c{index}.example.com", "*.", "example", "", "zzz-no-such",
        f"w{index}", "%2A.", "%00", "%zz", "a" * rng.randrange(1, 300), "GO.C1", "\u00e9", "<script>",
    ]
    return rng.choice(choices)


def random_target(rng, sites):
    roll = rng.random()
    if roll < 0.45:
        parameters = {"q": random_query(rng, sites)}
        if rng.random() < 0.7:
            parameters["page"] = rng.choice([str(rng.randrange(-5, 2_000_000)), "0", "-1", "x", "9" * 30, "1e3", ""])
        return "/console?" + urllib.parse.urlencode(parameters)
    if roll < 0.6:
        return f"/console?page={rng.randrange(1, 2_000_000)}"
    if roll < 0.9:
        index = rng.randrange(sites)
        host = rng.choice([f"go.c{index}.example.com", f"www.c{index}.example.com", f"x.w{index}.example.com",
                           f"*.w{index}.example.com", f"GO.C{index}.EXAMPLE.COM", "no-such.example.com", "%2e%2e"])
        extra = "?url=" + urllib.parse.quote(f"https://{host}/product/1") if rng.random() < 0.3 else ""
        return "/console/host/" + urllib.parse.quote(host, safe="*") + extra
    return rng.choice(["/console/", "/console/host/", "/console/style.css", "/console/nothing", "/console?q=&page=1"])


def run_layout(binary, layout, sites, requests, rng, deadline):
    directory = tempfile.mkdtemp(prefix="aasa-console-fuzz-")
    port, admin = free_port(), free_port()
    server = None
    try:
        make_config(directory, layout, sites, port, admin)
        log = open(os.path.join(directory, "server.log"), "w")
        server = subprocess.Popen([binary, "serve", "--config", os.path.join(directory, "config.json")],
                                  stdout=log, stderr=subprocess.STDOUT)
        ready = time.monotonic() + 120
        while time.monotonic() < ready:
            if server.poll() is not None:
                raise SystemExit(f"{layout}: the server exited at start:\n" + open(log.name).read()[-2000:])
            try:
                connection = http.client.HTTPConnection("127.0.0.1", admin, timeout=5)
                connection.request("GET", "/readyz")
                if connection.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise SystemExit(f"{layout}: not ready within 120 s")
        statuses = {}
        connection = http.client.HTTPConnection("127.0.0.1", admin, timeout=30)
        for _ in range(requests):
            if time.monotonic() > deadline:
                break
            target = random_target(rng, sites)
            try:
                connection.request("GET", target)
                response = connection.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as error:
                raise SystemExit(f"{layout} ({sites} sites): {target} -> no answer ({error}); server "
                                 f"{'exited ' + str(server.poll()) if server.poll() is not None else 'running'}")
            statuses[response.status] = statuses.get(response.status, 0) + 1
            if response.status not in (200, 400, 404):
                raise SystemExit(f"{layout} ({sites} sites): {target} -> {response.status}")
            if response.will_close:
                connection = http.client.HTTPConnection("127.0.0.1", admin, timeout=30)
        document = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        document.request("GET", "/.well-known/apple-app-site-association", headers={"Host": "go.c0.example.com"})
        answer = document.getresponse()
        answer.read()
        if server.poll() is not None or answer.status != 200:
            raise SystemExit(f"{layout}: the server stopped serving documents")
        done = sum(statuses.values())
        print(f"{layout:14} {sites * 2:>9} hosts  {done} requests  " +
              "  ".join(f"{status}: {count}" for status, count in sorted(statuses.items())))
        return done
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per layout")
    parser.add_argument("--large", type=int, default=1_000_000, help="hosts of the large run (0: none)")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--binary")
    parser.add_argument("--seconds", type=float, default=600, help="stop sending after this long in all")
    arguments = parser.parse_args()
    binary = arguments.binary or release_binary()
    rng = random.Random(arguments.seed)
    deadline = time.monotonic() + arguments.seconds
    total = 0
    for layout in ("one-per-file", "many-per-file", "wildcards", "android-only"):
        for sites in (1, 2, 500):
            total += run_layout(binary, layout, sites, arguments.requests, rng, deadline)
    if arguments.large:
        total += run_layout(binary, "many-per-file", arguments.large // 2, arguments.requests, rng, deadline)
    print(f"{total} console requests, no 500 and no stopped server")


if __name__ == "__main__":
    main()
