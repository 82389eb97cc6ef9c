#!/usr/bin/env python3
"""Replays the attacks aasa-server must survive against the release binary, each with a pass/fail
verdict and its figures. Loopback only; every attack is bounded in connections and time.

  slowloris     slowhttptest: thousands of connections sending their headers a byte at a time
  idle          thousands of idle keep-alive connections held open, while others are served
  body-flood    more connections than maxConnections, each stuck in a body it never finishes,
                while new clients keep arriving: every new client must be answered
  wrk           wrk with a thousand connections: zero errors
  files         reloads onto /dev/zero, /dev/urandom, a FIFO and an 8 GiB sparse file: rejected, the
                server keeps serving, SIGTERM still stops it
  admin         the admin listener with a foreign Host, an Origin, a form POST: refused, nothing reloads

A probe client measures availability during the long attacks: a fresh connection and a request every
50 ms, each with a 2-second deadline.

Usage: Benchmarks/attack.py [--quick] [--only NAME[,NAME]]
--quick (what CI runs) uses smaller counts and shorter attacks, and skips what needs tools CI does not
install (slowhttptest, wrk).
"""
import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402

DOCUMENT = '{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/a/*"}]}]}}'
REQUEST = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"


def raise_file_limit(count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 2000)), hard))


class Server:
    def __init__(self, binary, work, max_connections=10000, extra=None):
        self.work = work
        self.port = free_port()
        self.admin = free_port()
        self.config = f"{work}/config.json"
        with open(f"{work}/doc", "w") as f:
            f.write(DOCUMENT)
        server = {"listen": [f"127.0.0.1:{self.port}"], "admin": f"127.0.0.1:{self.admin}", "accessLog": False,
                  "maxConnections": max_connections, "reload": {"watch": False}, "timeouts": {"header": 10}}
        server.update(extra or {})
        self.write_config("doc", server)
        self.server_settings = server
        self.stderr = open(f"{work}/stderr.log", "w")
        self.process = subprocess.Popen([binary, "serve", "--config", self.config], stdout=subprocess.DEVNULL,
                                        stderr=self.stderr)
        deadline = time.time() + 10
        while time.time() < deadline:
            if probe(self.port):
                return
            time.sleep(0.05)
        raise SystemExit("server did not start: " + open(f"{work}/stderr.log").read())

    def write_config(self, file, server=None):
        text = json.dumps({"version": 1, "sites": [{"hosts": ["example.com"], "file": file}],
                           "server": server or self.server_settings})
        temporary = self.config + ".tmp"
        with open(temporary, "w") as f:
            f.write(text)
        os.rename(temporary, self.config)

    def log(self):
        return open(f"{self.work}/stderr.log").read()

    def metric(self, name):
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/metrics", timeout=5).read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.stderr.close()


def probe(port, timeout=2.0):
    """One fresh connection and one request; True when a 200 with the document came back in time."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(REQUEST)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            return data.startswith(b"HTTP/1.1 200") and data.endswith(DOCUMENT.encode())
    except OSError:
        return False


class Prober:
    """Probes every 50 ms in the background; availability = successful probes / probes."""

    def __init__(self, port):
        self.port = port
        self.results = []
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            self.results.append(probe(self.port))
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.thread.join(timeout=5)
        ok = sum(self.results)
        return ok, len(self.results)


def attack_slowloris(binary, work, quick):
    if not shutil.which("slowhttptest"):
        return None, "slowhttptest is not installed (apt-get install slowhttptest)"
    connections, seconds = (1000, 15) if quick else (4000, 30)
    server = Server(binary, work)
    prober = Prober(server.port)
    try:
        subprocess.run(["slowhttptest", "-c", str(connections), "-H", "-i", "5", "-r", "400", "-l", str(seconds),
                        "-u", f"http://127.0.0.1:{server.port}/.well-known/apple-app-site-association", "-x", "24", "-p", "3"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds + 60)
    finally:
        ok, total = prober.stop()
        timeouts = server.metric('aasa_connection_timeouts_total{kind="header"}')
        server.stop()
    available = ok / max(1, total)
    return available >= 0.99, f"{connections} slow connections for {seconds} s: {ok}/{total} probes answered ({available:.1%}), header timeouts {timeouts}"


def attack_idle(binary, work, quick):
    count = 2000 if quick else 10000
    raise_file_limit(count)
    server = Server(binary, work, max_connections=count + 100)
    held = []
    try:
        started = time.time()
        for _ in range(count):
            held.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        opened = time.time() - started
        # Silent connections wait in the kernel until their first bytes or about a second
        # (TCP_DEFER_ACCEPT), then the server holds them: give that a few seconds, well inside the
        # header timeout (10 s) that will close them.
        deadline = time.time() + 6
        open_metric = None
        while time.time() < deadline and (open_metric or 0) < count:
            time.sleep(0.5)
            open_metric = server.metric("aasa_open_connections")
        answered = sum(probe(server.port) for _ in range(20))
    finally:
        for s in held:
            s.close()
        server.stop()
    passed = answered == 20 and open_metric is not None and open_metric >= count
    return passed, f"{count} idle connections opened in {opened:.1f} s, {int(open_metric or 0)} held; {answered}/20 new clients answered"


def attack_body_flood(binary, work, quick):
    cap = 400 if quick else 10000
    count = cap + (20 if quick else 200)
    raise_file_limit(count + 1000)
    server = Server(binary, work, max_connections=cap)
    held = []
    try:
        for _ in range(count):
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                s.sendall(b"GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 65536\r\n\r\nx")
                held.append(s)
            except OSError:
                pass
        # New clients keep arriving while the attacker holds (and re-opens) its connections.
        seconds = 5 if quick else 20
        ok = total = 0
        gauge_max = 0
        deadline = time.time() + seconds
        while time.time() < deadline:
            total += 1
            ok += probe(server.port)
            # The attacker re-opens what it loses and keeps its count: a client holding every socket it
            # ever opened runs out of local ports before the server runs out of anything.
            if len(held) >= count:
                held.pop(0).close()
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                s.sendall(b"GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 65536\r\n\r\nx")
                held.append(s)
            except OSError:
                pass
            if total % 20 == 0:
                gauge_max = max(gauge_max, server.metric("aasa_open_connections") or 0)
        evicted = server.metric("aasa_connections_evicted_total")
    finally:
        for s in held:
            s.close()
        server.stop()
    passed = ok == total and gauge_max <= cap
    return passed, (f"{count} connections stuck in a body against maxConnections {cap}, attacker re-opening: "
                    f"{ok}/{total} new clients answered over {seconds} s; {int(evicted or 0)} evicted; gauge max {int(gauge_max)}")


def attack_wrk(binary, work, quick):
    if not shutil.which("wrk"):
        return None, "wrk is not installed (apt-get install wrk)"
    server = Server(binary, work)
    try:
        out = subprocess.run(["wrk", "-t2", "-c1000", "-d8s", "-H", "Host: example.com",
                              f"http://127.0.0.1:{server.port}/.well-known/apple-app-site-association"],
                             capture_output=True, text=True, timeout=60).stdout
    finally:
        server.stop()
    errors = "Socket errors" in out or "Non-2xx" in out
    requests = next((line.split()[0] for line in out.splitlines() if "requests in" in line), "?")
    return not errors, f"wrk -c1000 for 8 s: {requests} requests, " + ("errors: " + out if errors else "no errors")


def attack_files(binary, work, quick):
    server = Server(binary, work)
    os.mkfifo(f"{work}/fifo")
    with open(f"{work}/sparse", "wb") as f:
        f.truncate(8 << 30)
    outcomes = []
    try:
        for target in ["/dev/zero", "/dev/urandom", "fifo", "sparse"]:
            server.write_config(target)
            started = time.time()
            server.process.send_signal(signal.SIGHUP)
            rejected = False
            while time.time() - started < 5:
                if server.log().count("rejected, still serving generation 1") > len(outcomes):
                    rejected = True
                    break
                time.sleep(0.02)
            outcomes.append((target, rejected, time.time() - started, probe(server.port)))
        stopping = time.time()
        server.process.send_signal(signal.SIGTERM)
        status = server.process.wait(timeout=15)
        stopped = time.time() - stopping
    finally:
        server.stop()
    passed = all(rejected and served for _, rejected, _, served in outcomes) and status == 0 and stopped < 5
    detail = ", ".join(f"{t}: {'rejected' if r else 'NOT rejected'} in {s * 1000:.0f} ms, {'still serving' if p else 'NOT serving'}"
                       for t, r, s, p in outcomes)
    return passed, f"{detail}; SIGTERM stopped it in {stopped:.2f} s (exit {status})"


def attack_admin(binary, work, quick):
    server = Server(binary, work)
    results = {}
    try:
        url = f"http://127.0.0.1:{server.admin}/reload"
        for label, headers, body in [
            ("foreign Host", {"Host": "attacker.example"}, None),
            ("Origin", {"Origin": "http://evil.example", "Content-Type": "text/plain"}, b"x"),
            ("form POST", {"Content-Type": "application/x-www-form-urlencoded"}, b"a=b"),
        ]:
            request = urllib.request.Request(url, data=body or b"", headers=headers, method="POST")
            try:
                results[label] = urllib.request.urlopen(request, timeout=5).status
            except urllib.error.HTTPError as error:
                results[label] = error.code
        reloaded = "reloaded (POST /reload)" in server.log()
    finally:
        server.stop()
    passed = results == {"foreign Host": 403, "Origin": 403, "form POST": 415} and not reloaded
    return passed, ", ".join(f"{k}: {v}" for k, v in results.items()) + ("; a reload ran!" if reloaded else "; nothing reloaded")


ATTACKS = {"slowloris": attack_slowloris, "idle": attack_idle, "body-flood": attack_body_flood, "wrk": attack_wrk,
           "files": attack_files, "admin": attack_admin}
QUICK = ["idle", "body-flood", "files", "admin"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only")
    parser.add_argument("--binary", help="a built aasa-server (default: build this checkout in release mode)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else (QUICK if args.quick else list(ATTACKS))
    binary = args.binary or release_binary()
    failed = False
    for name in names:
        work = tempfile.mkdtemp(prefix=f"aasa-attack-{name}-")
        started = time.time()
        try:
            passed, detail = ATTACKS[name](binary, work, args.quick)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        verdict = "skip" if passed is None else ("PASS" if passed else "FAIL")
        failed = failed or passed is False
        print(f"{verdict:4}  {name:10}  {time.time() - started:5.1f} s  {detail}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
