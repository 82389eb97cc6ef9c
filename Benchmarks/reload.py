#!/usr/bin/env python3
"""Hot-reload cost: how long a 10,000-host config takes to reload, and how much serving throughput
remains while the config is reloaded once a second.

Method: the release build (Swift runtime static) with one event loop. Reload time: every config variant
is written beforehand, put in place with a rename and reloaded through POST /reload on the admin
listener, whose JSON answer carries the time from reading the first file to the new snapshot in force;
measured with the server on both CPUs (as deployed: sites are built in parallel) and on one. Throughput:
server pinned to CPU 0, wrk on CPU 1 (keep-alive, 64 connections), steady and reloading runs
interleaved; medians of --repetitions.

Usage: Benchmarks/reload.py [--seconds 8] [--repetitions 3] [--sites 5000]
"""
import argparse
import atexit
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import ROOT, free_port, release_binary  # noqa: E402


def config(sites, port, admin, edits=None, team="ABCDE12345"):
    """`edits` maps a site number to a revision: that site gets a different product path. `team` is used by
    every site (through the "shop" name), so changing it changes every document."""
    entries = []
    for i in range(sites):
        product = f"/product/{i}/*" if not edits or i not in edits else f"/product/{i}/r{edits[i]}/*"
        entries.append({"hosts": [f"shop{i}.example.com", f"www.shop{i}.example.com"],
                        "applinks": {"formats": ["modern", "legacy"], "details": [{
                            "apps": ["shop", f"ABCDE12345.com.example.app{i}"],
                            "components": [{"/": "/admin/*", "exclude": True}, {"/": product},
                                           {"/": "/cart", "?": {"id": "?*"}}]}]},
                        "webcredentials": {"apps": ["shop"]}})
    entries.append({"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}})
    return {"version": 1, "apps": {"shop": f"{team}.com.example.shop"}, "sites": entries,
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


def write_atomically(path, document):
    """How deploy tools replace a config: write a new file, rename it over the old one."""
    with open(path + ".new", "w") as f:
        json.dump(document, f)
    os.replace(path + ".new", path)


def start_server(binary, path, admin, cpus):
    """The server on `cpus` (taskset list); returns once /healthz answers."""
    server = subprocess.Popen(["taskset", "-c", cpus, binary, "serve", "--config", path],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{admin}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not come up: " + server.stderr.read())


def stop_server(server):
    server.terminate()
    server.wait(timeout=20)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--sites", type=int, default=5000)
    args = parser.parse_args()
    binary = release_binary()
    work = tempfile.mkdtemp(prefix="aasa-reload-")
    atexit.register(shutil.rmtree, work, True)  # however the run ends
    port, admin = free_port(), free_port()
    path = f"{work}/config.json"
    hosts = 2 * args.sites + 1

    # Every config variant is written before the measurements, so the benchmark's own JSON encoding does
    # not compete with the server for CPU; a reload is then a rename and a POST, as a deploy would be.
    variants, team_variants = [], []

    def prepare(edit_count):
        """Variants with 1, 2, ... sites edited, on top of the base config, and the every-document ones."""
        edits = {}
        variants.clear()
        for revision in range(1, edit_count + 1):
            site = (revision * 7919) % args.sites
            edits[site] = revision
            variant = f"{work}/config.{revision}.json"
            with open(variant, "w") as f:
                json.dump(config(args.sites, port, admin, edits=edits), f)
            variants.append((variant, site))
        team_variants.clear()
        for number, team in enumerate(["FGHIJ67890", "ABCDE12345"] * 4):
            variant = f"{work}/config.team{number}.json"
            with open(variant, "w") as f:
                json.dump(config(args.sites, port, admin, team=team), f)
            team_variants.append(variant)
        with open(path, "w") as f:
            json.dump(config(args.sites, port, admin), f)

    def edit_one_site():
        """Puts the next variant (one more site changed) in place and reloads."""
        variant, site = variants.pop(0)
        os.replace(variant, path)
        outcome = reload(admin)
        expected = f"hosts changed: shop{site}.example.com, www.shop{site}.example.com"
        if outcome["result"] != "reloaded" or outcome["changes"] != expected:
            raise SystemExit(f"reload did not apply the edit of site {site}: {outcome}")
        return outcome["milliseconds"]

    def change_every_document():
        """Rewrites the app ID every site uses (through the "shop" name), so every document changes."""
        os.replace(team_variants.pop(0), path)
        outcome = reload(admin)
        if outcome["result"] != "reloaded" or f"and {hosts - 5} more" not in outcome["changes"]:
            raise SystemExit(f"full reload did not change every host: {outcome}")
        return outcome["milliseconds"]

    prepare(0)
    size = os.path.getsize(path) // 1024
    print(f"reload of a {hosts}-host config ({size} KiB), from reading the file to the new snapshot in force, "
          f"median of 8 (target < 200 ms):")
    for cpus, label in (("0,1", "both CPUs (as deployed)"), ("0", "one CPU")):
        prepare(8)
        server = start_server(binary, path, admin, cpus)
        try:
            full = [change_every_document() for _ in range(8)]
            one = [edit_one_site() for _ in range(8)]
            unchanged = [reload(admin)["milliseconds"] for _ in range(8)]
        finally:
            stop_server(server)
        print(f"  {label}: every document changed {statistics.median(full)} ms {full}; "
              f"one site edited {statistics.median(one)} ms {one}; nothing changed {statistics.median(unchanged)} ms")

    # Throughput: the server and its reloads on CPU 0, wrk on CPU 1.
    prepare(args.repetitions * (args.seconds + 2))
    server = start_server(binary, path, admin, "0")
    try:
        steady, reloading, errors, reload_counts, under_load = [], [], 0, [], []
        for repetition in range(args.repetitions):
            for mode in (["steady", "reloading"] if repetition % 2 == 0 else ["reloading", "steady"]):
                stop = threading.Event()
                times = []

                def reloader():
                    # Once a second: an edit to one site, written atomically, then POST /reload.
                    next_at = time.time() + 1.0
                    while not stop.wait(max(0.0, next_at - time.time())):
                        times.append(edit_one_site())
                        next_at += 1.0
                thread = threading.Thread(target=reloader) if mode == "reloading" else None
                if thread:
                    thread.start()
                rate, failed = wrk(port, args.seconds)
                stop.set()
                if thread:
                    thread.join()
                    reload_counts.append(len(times))
                    under_load += times
                errors += failed
                (steady if mode == "steady" else reloading).append(rate)
                print(f"  rep {repetition + 1} {mode:9} {rate:9.0f} req/s, errors {failed}"
                      + (f", reloads {len(times)} (ms under load: {times})" if thread else ""), file=sys.stderr)
        ratio = statistics.median(reloading) / statistics.median(steady)
        print(f"throughput while reloading once a second (one site edited each time; server and reloads on one CPU): "
              f"{statistics.median(reloading):.0f} req/s vs {statistics.median(steady):.0f} steady = {ratio * 100:.1f}% "
              f"(target ≥ 95%); reloads per {args.seconds} s run: {reload_counts}, median "
              f"{statistics.median(under_load)} ms each under load; failed requests: {errors}")
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
