#!/usr/bin/env python3
"""Two replicas sharing their short links through one PostgreSQL server (docs/short-links.md), on loopback.

1. Agreement: --creations links created through one replica's API (`POST /v1/links`, alternating
   replicas); after each, the other replica is asked every 5 ms until the link answers 302. Reported:
   the time from the 201 to the other replica's first 302 (median, 90th percentile, worst).
2. Outage under clicks: wrk clicks a stored link on both replicas for --seconds (default 50); PostgreSQL
   is stopped (immediate shutdown, as a crash) --outage seconds (default 30) after the start, and started
   again --outage seconds later. Then both replicas stop (writing what they hold). Reported: clicks sent,
   clicks that failed (anything but a 302, or a socket error: the goal is none), and the clicks in the
   database against the 302s wrk counted (the goal: equal).

PostgreSQL is Debian's: a fresh initdb cluster in a temporary directory on a free loopback port (as the
postgres user when run as root). The servers run with one event loop each, access logs off.

Usage: Benchmarks/link-replicas.py [--creations 50] [--seconds 50] [--outage 30] [--binary PATH]
Needs: postgresql, wrk. Traffic goes to 127.0.0.1 only, every phase bounded in count and time.
"""
import argparse
import glob
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
TOKEN = "bench-token-0123456789abcdef"


class Cluster:
    """An initdb cluster of Debian's PostgreSQL, started and stopped by this script."""

    def __init__(self, directory):
        versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.directory = directory
        self.port = free_port()
        os.chmod(directory, 0o755)
        if os.getuid() == 0:
            subprocess.run(["chown", "postgres:postgres", directory], check=True)
        self.run([f"{self.bin}/initdb", "-D", f"{directory}/data", "-U", "aasa", "-A", "trust", "--no-sync", "-E", "UTF8",
                  "--locale=C"])
        self.server = None
        self.start()
        self.sql("CREATE DATABASE links")

    def owner(self, command):
        if os.getuid() == 0:
            return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *command]
        return command

    def run(self, command):
        return subprocess.run(self.owner(command), check=True, capture_output=True, text=True, timeout=120)

    def start(self):
        log = open(f"{self.directory}/server.log", "a")
        self.server = subprocess.Popen(self.owner([f"{self.bin}/postgres", "-D", f"{self.directory}/data", "-p", str(self.port),
                                                   "-k", self.directory, "-c", "listen_addresses=127.0.0.1"]),
                                       stdout=log, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if subprocess.run([f"{self.bin}/pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]).returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("PostgreSQL did not start")

    def stop(self):
        if self.server and self.server.poll() is None:
            self.server.send_signal(signal.SIGQUIT)
            self.server.wait(timeout=60)

    def sql(self, statement):
        return self.run([f"{self.bin}/psql", "-h", self.directory, "-p", str(self.port), "-U", "aasa", "-d",
                         "links" if "CREATE DATABASE" not in statement else "postgres", "-X", "-A", "-t", "-c",
                         statement]).stdout.strip()

    def connection(self):
        return f"host=127.0.0.1 port={self.port} dbname=links user=aasa"


def start_replica(binary, directory, cluster):
    os.makedirs(directory, exist_ok=True)
    port, admin = free_port(), free_port()
    config = {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}},
              "sites": [{"hosts": ["go.example.com"],
                         "links": {"app": "shop", "allow": ["shop.example.com"],
                                   "rules": [{"/": "/p/*", "web": "https://shop.example.com/item/{1}"}]}}],
              "server": {"listen": [f"127.0.0.1:{port}"], "admin": f"127.0.0.1:{admin}", "adminTokenFile": "admin.token",
                         "threads": 1, "accessLog": False, "linkStore": {"postgres": cluster.connection()},
                         "linkAPI": {"creationsPerSecond": 1000000}}}
    with open(f"{directory}/config.json", "w") as handle:
        json.dump(config, handle)
    with open(f"{directory}/admin.token", "w") as handle:
        handle.write(TOKEN)
    log = open(f"{directory}/stderr.log", "w+")
    server = subprocess.Popen([binary, "serve", "--config", f"{directory}/config.json"], stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        log.seek(0)
        if re.search(r"serving \d+ sites? with", log.read()):
            return server, port, admin, log
        if server.poll() is not None:
            raise RuntimeError("replica exited")
        time.sleep(0.01)
    raise RuntimeError("replica did not start")


def create(admin, suffix):
    body = json.dumps({"domain": "go.example.com", "suffix": suffix,
                       "parameters": {"link": f"https://shop.example.com/{suffix}"}}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{admin}/v1/links", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201, response.status


def click_status(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", path, headers={"Host": "go.example.com", "User-Agent": DESKTOP})
    status = connection.getresponse().status
    connection.close()
    return status


def agreement(replicas, creations):
    latencies = []
    for index in range(creations):
        origin, other = (replicas[0], replicas[1]) if index % 2 == 0 else (replicas[1], replicas[0])
        suffix = f"agree{index}"
        create(origin[2], suffix)
        created = time.monotonic()
        while click_status(other[1], f"/{suffix}") != 302:
            if time.monotonic() - created > 10:
                raise RuntimeError(f"/{suffix} not answered by the other replica after 10 s")
            time.sleep(0.005)
        latencies.append((time.monotonic() - created) * 1000)
    latencies.sort()
    print(f"agreement: {creations} links, created on one replica, answered by the other after "
          f"median {statistics.median(latencies):.0f} ms, p90 {latencies[int(len(latencies) * 0.9) - 1]:.0f} ms, "
          f"worst {latencies[-1]:.0f} ms")


def wrk(port, seconds, results, index):
    command = ["wrk", "-t1", "-c4", f"-d{seconds}s", "--timeout", "5s", "-H", "Host: go.example.com", "-H",
               f"User-Agent: {DESKTOP}", f"http://127.0.0.1:{port}/clicked"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    out = run.stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non3xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    results[index] = (requests, int(non3xx.group(1)) if non3xx else 0, sum(map(int, errors.groups())) if errors else 0)


def outage(replicas, cluster, seconds, outage_seconds):
    create(replicas[0][2], "clicked")
    deadline = time.monotonic() + 10
    # Until each replica answers: exactly one 302 each (a 404 before is no click of a stored link).
    for _, port, _, _ in replicas:
        while click_status(port, "/clicked") != 302:
            if time.monotonic() > deadline:
                raise RuntimeError("/clicked not answered")
            time.sleep(0.01)
    results = [None, None]
    threads = [threading.Thread(target=wrk, args=(port, seconds, results, i)) for i, (_, port, _, _) in enumerate(replicas)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(min(10, seconds / 5))
    cluster.stop()
    stopped = time.monotonic()
    time.sleep(outage_seconds)
    cluster.start()
    print(f"outage: PostgreSQL stopped {stopped - started:.0f} s into the clicks, for {time.monotonic() - stopped:.1f} s")
    for thread in threads:
        thread.join()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--creations", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=50)
    parser.add_argument("--outage", type=int, default=30)
    parser.add_argument("--binary")
    options = parser.parse_args()
    if options.seconds > 600 or options.outage >= options.seconds:
        sys.exit("--seconds at most 600, --outage shorter than it")
    binary = options.binary or release_binary()
    work = tempfile.mkdtemp(prefix="aasa-replicas-")
    os.chmod(work, 0o755)  # the postgres user walks through it to its cluster
    os.makedirs(work + "/pg")
    cluster = Cluster(work + "/pg")
    replicas = []
    try:
        replicas = [start_replica(binary, f"{work}/replica{i}", cluster) for i in range(2)]
        agreement(replicas, options.creations)
        results = outage(replicas, cluster, options.seconds, options.outage)
        for server, _, _, _ in replicas:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        sent = sum(r[0] for r in results)
        failed = sum(r[1] + r[2] for r in results)
        stored = int(cluster.sql("SELECT coalesce(sum(c.count), 0) FROM link_clicks c JOIN links l ON l.id = c.link "
                                 "WHERE l.suffix = 'clicked'"))
        print(f"clicks: {sent} sent to the two replicas in {options.seconds} s, {failed} failed "
              f"(non-302 {sum(r[1] for r in results)}, socket errors {sum(r[2] for r in results)})")
        # Each replica's readiness probe was one 302 of the link as well; and wrk does not report the requests
        # still in flight when it stops (at most its 4 connections per replica), which were answered and counted.
        expected = sent - failed + len(replicas)
        in_flight = 4 * len(replicas)
        verdict = ("none lost" if expected <= stored <= expected + in_flight
                   else f"{expected - stored} missing" if stored < expected else f"{stored - expected} too many")
        print(f"counted: {stored} clicks of /clicked in PostgreSQL after the outage, against {expected} 302s "
              f"(wrk's {sent - failed}, {len(replicas)} readiness probes, up to {in_flight} in flight at wrk's end "
              f"uncounted by wrk): {verdict}")
        for index, (_, _, _, log) in enumerate(replicas):
            log.seek(0)
            lines = [line for line in log.read().splitlines() if "short links" in line]
            print(f"replica {index} log: " + " | ".join(lines[-3:]))
    finally:
        for server, _, _, _ in replicas:
            if server.poll() is None:
                server.kill()
        cluster.stop()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
