#!/usr/bin/env python3
"""Stored short links at scale (docs/short-links.md), on loopback, one event loop, logs off.

1. Start with N stored links (default 1,000,000; --links 10000000 for the issue's ten million): the link
   store is written with sqlite3 (the server's own schema, made by `aasa-server links list`), then the
   server starts; reported: start until it serves (the store is loaded before the listener opens), RSS
   settled, bytes per link over an empty store, and the cost of a click on a random link among all N
   (server CPU µs per request, wrk with a Lua script drawing a suffix per request: every click is a table
   lookup, never the answer cache).
2. Creation through the API: `POST /v1/links` (the API's own body, unguessable suffixes), wrk with one
   connection per concurrent client for --seconds; reported: links created per second (201s), and that
   every one of them is in the store afterwards.
3. Click recording: clicks as fast as one loop answers them (wrk, 64 connections) on 1,000 links, then the
   server stops; reported: the rate, and the clicks in the store against the 302s wrk counted (the goal:
   none lost); and the server CPU µs per click with recording against a config rule's redirect (not
   recorded) on 1,000 paths, in the same run (neither fits the per-loop answer cache).

Usage: Benchmarks/short-links.py [--links 1000000] [--seconds 5] [--binary PATH]
Needs: sqlite3, wrk, taskset. Traffic goes to 127.0.0.1 only, every run bounded by --seconds.
"""
import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
TOKEN = "bench-token-0123456789abcdef"


def status_mb(pid, field):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_config(directory, port, admin):
    config = {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}},
              "sites": [{"hosts": ["go.example.com"],
                         "links": {"app": "shop", "allow": ["shop.example.com"],
                                   "rules": [{"/": "/p/*", "web": "https://shop.example.com/item/{1}"}]}}],
              "server": {"listen": [f"127.0.0.1:{port}"], "admin": f"127.0.0.1:{admin}", "adminTokenFile": "admin.token",
                         "threads": 1, "accessLog": False, "stateDirectory": "state",
                         "linkAPI": {"creationsPerSecond": 1000000}}}
    with open(f"{directory}/config.json", "w") as handle:
        json.dump(config, handle)
    with open(f"{directory}/admin.token", "w") as handle:
        handle.write(TOKEN)


def fill_store(binary, directory, count):
    """The server's schema (its own migrations), then `count` links l0 … l<count-1> in one transaction."""
    subprocess.run([binary, "links", "list", "--config", f"{directory}/config.json"], check=True, capture_output=True)
    database = sqlite3.connect(f"{directory}/state/links.sqlite")
    database.execute("PRAGMA journal_mode = WAL")
    batch = 100_000
    for start in range(0, count, batch):
        rows = [("go.example.com", f"l{i}", json.dumps({"link": f"https://shop.example.com/item/{i}"}), "active", 1, 1, i + 1)
                for i in range(start, min(count, start + batch))]
        database.executemany("INSERT INTO links (domain, suffix, parameters, state, created, updated, revision) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    database.commit()
    database.close()


def start(binary, directory):
    log = open(f"{directory}/stderr.log", "w+")
    started = time.monotonic()
    server = subprocess.Popen(["taskset", "-c", "0", binary, "serve", "--config", f"{directory}/config.json"],
                              stdout=subprocess.DEVNULL, stderr=log)
    deadline = started + 600
    while time.monotonic() < deadline:
        log.seek(0)
        if "serving " in log.read():
            return server, time.monotonic() - started
        if server.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"server exited: {log.read()[-2000:]}")
        time.sleep(0.005)
    raise RuntimeError("not serving within 600 s")


def stop(server):
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()


def wrk(port, seconds, script=None, path="/", connections=64, extra=()):
    command = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-H", "Host: go.example.com",
               "-H", f"User-Agent: {DESKTOP}", *extra]
    if script:
        command += ["-s", script]
    command.append(f"http://127.0.0.1:{port}{path}")
    run = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    out = run.stdout
    if not re.search(r"(\d+) requests in", out):
        raise RuntimeError(f"wrk: {out} {run.stderr}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return requests, int(errors.group(1)) if errors else 0, float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def lua(directory, name, text):
    path = f"{directory}/{name}.lua"
    with open(path, "w") as handle:
        handle.write(text)
    return path


def scale(binary, count, seconds):
    rows = {}
    for links in (0, count):
        directory = tempfile.mkdtemp(prefix="aasa-short-")
        try:
            port, admin = free_port(), free_port()
            write_config(directory, port, admin)
            fill_store(binary, directory, links)
            os.sync()
            server, ready = start(binary, directory)
            try:
                time.sleep(12)  # memory is returned after 10 s without reloads
                rss = status_mb(server.pid, "VmRSS")
                cost = None
                if links:
                    script = lua(directory, "random", f"math.randomseed(42)\n"
                                 f"request = function() return wrk.format(nil, '/l' .. math.random(0, {links - 1})) end\n")
                    before = cpu_seconds(server.pid)
                    requests, errors, rate = wrk(port, seconds, script)
                    assert errors == 0, f"{errors} clicks were not redirects"
                    cost = (cpu_seconds(server.pid) - before) * 1e6 / requests
                rows[links] = {"ready_s": ready, "rss_mb": rss, "click_us": cost}
            finally:
                stop(server)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    empty, full = rows[0], rows[count]
    per_link = (full["rss_mb"] - empty["rss_mb"]) * 1024 * 1024 / count
    print(f"| {count:,} stored links | ready {full['ready_s']:.2f} s (empty store {empty['ready_s']:.2f} s) | "
          f"RSS {full['rss_mb']:.0f} MB (empty {empty['rss_mb']:.0f} MB): {per_link:.0f} bytes a link | "
          f"a click on a random link {full['click_us']:.2f} µs |")


def creation_and_clicks(binary, seconds):
    directory = tempfile.mkdtemp(prefix="aasa-short-")
    try:
        port, admin = free_port(), free_port()
        write_config(directory, port, admin)
        fill_store(binary, directory, 1000)
        server, _ = start(binary, directory)
        try:
            body = json.dumps({"domain": "go.example.com", "parameters": {"link": "https://shop.example.com/item/1"}})
            script = lua(directory, "create", "wrk.method = 'POST'\n"
                         f"wrk.body = {json.dumps(body)}\n"
                         "wrk.headers['Content-Type'] = 'application/json'\n"
                         f"wrk.headers['Authorization'] = 'Bearer {TOKEN}'\n")
            command = ["taskset", "-c", "1", "wrk", "-t1", "-c8", f"-d{seconds}s", "-s", script, f"http://127.0.0.1:{admin}/v1/links"]
            out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60).stdout
            requests = int(re.search(r"(\d+) requests in", out).group(1))
            errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
            errors = int(errors.group(1)) if errors else 0
            time.sleep(1)
            database = sqlite3.connect(f"{directory}/state/links.sqlite")
            stored = database.execute("SELECT count(*) FROM links").fetchone()[0] - 1000
            database.close()
            print(f"| API creation (POST /v1/links, 8 clients) | {(requests - errors) / seconds:,.0f} links/s | "
                  f"{requests - errors:,} created, {stored:,} in the store, {errors} refused |")

            # Clicks with recording (stored links) against the same redirect from a config rule (none).
            script = lua(directory, "clicks", "math.randomseed(7)\n"
                         "request = function() return wrk.format(nil, '/l' .. math.random(0, 999)) end\n")
            # The same redirect from a config rule, on 1,000 paths as well: neither kind fits the answer cache.
            rules = lua(directory, "rules", "math.randomseed(7)\n"
                        "request = function() return wrk.format(nil, '/p/' .. math.random(0, 999)) end\n")
            costs = {"stored": [], "rule": []}
            total_stored = 0
            for _ in range(3):
                for kind in ("stored", "rule"):
                    before = cpu_seconds(server.pid)
                    if kind == "stored":
                        requests, errors, rate = wrk(port, seconds, script)
                        total_stored += requests - errors
                        stored_rate = rate
                    else:
                        requests, errors, rate = wrk(port, seconds, rules)
                    assert errors == 0
                    costs[kind].append((cpu_seconds(server.pid) - before) * 1e6 / requests)
        finally:
            stop(server)
        database = sqlite3.connect(f"{directory}/state/links.sqlite")
        counted = database.execute("SELECT coalesce(sum(count), 0) FROM link_clicks").fetchone()[0]
        database.close()
        stored_cost, rule_cost = sorted(costs["stored"])[1], sorted(costs["rule"])[1]
        # wrk counts the answers it read; requests in flight when it stops were answered and counted too.
        lost = max(0, total_stored - counted)
        print(f"| click recording | {stored_rate:,.0f} clicks/s | {total_stored:,} clicks answered, {counted:,} in the store "
              f"({lost:,} lost) | {stored_cost:.2f} µs per recorded click on 1,000 links vs {rule_cost:.2f} µs per "
              f"config-rule redirect on 1,000 paths ({(stored_cost / rule_cost - 1) * 100:+.1f} %) |")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--binary")
    arguments = parser.parse_args()
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing: apt-get install wrk util-linux")
    binary = arguments.binary or release_binary()
    print(f"binary {binary}")
    scale(binary, arguments.links, arguments.seconds)
    creation_and_clicks(binary, arguments.seconds)


if __name__ == "__main__":
    main()
