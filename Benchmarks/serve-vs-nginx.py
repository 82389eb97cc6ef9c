#!/usr/bin/env python3
"""Side-by-side cost of serving AASA files: aasa-server versus Debian's nginx and H2O (and, with
--baseline, an earlier aasa-server build), all in one interleaved run.

Method: each server runs one worker pinned to CPU 0, the load generator runs on CPU 1; tests are
interleaved (every server gets a test, then the next test), the order rotates per repetition; medians
are reported. The number to compare is server CPU microseconds per request: utime+stime of the server's
process tree from /proc, divided by the requests completed (on 2 cores the client is often the
bottleneck, so req/s mostly shows the client's limit).

Servers, configured alike: one worker/thread/event loop, access logs off, the same ECDSA P-256
certificate, TLS 1.2 + 1.3, session cache on the server side, keep-alive on. nginx: sendfile on,
tcp_nopush on, `default_type application/json` for the AASA location. H2O: file.dir with
application/json as the default MIME type. aasa-server: the documents as hosted files.

Documents: a ~2.2 KB AASA for Host example.com and a ~101 KB one for large.example.com.

Cells: keep-alive (wrk -t1 -c64), new connection per request (Connection: close, -c16), HTTPS
keep-alive, a full TLS 1.3 handshake + one GET per connection (a client that never resumes, since wrk
resumes sessions), the 101 KB document over keep-alive, and a link's redirect over keep-alive (a
desktop browser's GET /p/42 on go.example.com: aasa-server's link rule with a web template, nginx's
`return 302`, H2O's `redirect:`, each answering 302 to https://shop.example.com/item/42), and a stored
short link's click (GET /s42: aasa-server's link store in its state directory, the click counted for
the link's numbers; nginx's and H2O's same redirect for that path). RSS: idle (after start), peak (VmHWM
at the end: start-up's own peak included), peak under load (sampled every 50 ms during the tests) and
after (some seconds after the last test; memory a burst leaves behind).

Each server runs as one process for the whole run, unless --fresh starts every server anew for each
repetition (idle and peak RSS are then medians over the repetitions' processes, the peak under load the
highest seen): where a process's pages and code fall in the caches can make it slower or faster for its
whole life, and with one process that lands on every repetition alike. Besides the medians, the run prints
each cell's ratio within each repetition (aasa-server over each other server, the two measured minutes
apart at most): their median, lowest and highest, and in how many repetitions aasa-server was at or below.

The "C limit" column is Benchmarks/limit-server.c, compiled by this script: one thread, epoll, each
response prepared once and sent with one call, OpenSSL for TLS, nothing validated, no Date, no limits —
the least that passes these cells, so "aasa/C limit" reads how far aasa-server is from this machine's
floor (the scale issue's yardstick).

Usage: Benchmarks/serve-vs-nginx.py [--seconds 8] [--repetitions 3] [--baseline PATH] [--settle 30] [--without-limit]
                                     [--fresh]
Needs: nginx, h2o, wrk (apt-get install nginx h2o wrk); builds aasa-server in release mode with the Swift
runtime linked statically (--static-swift-stdlib), as it is deployed.
Traffic goes to 127.0.0.1 only, and every run is bounded by --seconds.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402
TICKS = os.sysconf("SC_CLK_TCK")


def aasa_document(components):
    items = [{"/": "/admin/*", "exclude": True, "comment": "admin stays in Safari"}]
    items += [{"/": f"/collection-{i}/*", "comment": f"collection {i} pages"} for i in range(components)]
    document = {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": items}]},
                "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}
    return json.dumps(document, separators=(",", ":"))


def tree_pids(pid):
    pids = [pid]
    for child in subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout.split():
        pids += tree_pids(int(child))
    return pids


def cpu_seconds(pid):
    total = 0
    for p in tree_pids(pid):
        try:
            fields = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        except FileNotFoundError:
            pass
    return total / TICKS


def rss_mb(pid, field):
    total = 0
    for p in tree_pids(pid):
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def sample_rss(pid, done, peaks, name):
    """Keeps in peaks[name] the largest RSS of the process tree seen every 50 ms until `done` is set: the
    peak while serving, which VmHWM (start-up included) is not."""
    while True:
        peaks[name] = max(peaks[name], rss_mb(pid, "VmRSS"))
        if done.wait(0.05):
            return


def wait_port(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"port {port} did not open")


DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


def run_wrk(port, seconds, close=False, scheme="http", host="example.com", path="/.well-known/apple-app-site-association",
            agent=None):
    connections = "-c16" if close else "-c64"
    command = ["taskset", "-c", "1", "wrk", "-t1", connections, f"-d{seconds}s", "--latency", "-H", f"Host: {host}"]
    if close:
        command += ["-H", "Connection: close"]
    if agent:
        command += ["-H", f"User-Agent: {agent}"]
    command.append(f"{scheme}://127.0.0.1:{port}{path}")
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    return {"requests": requests, "rate": rate, "p99_ms": float(p99.group(1)) * scale,
            "errors": (int(errors.group(1)) if errors else 0) + (sum(map(int, socket_errors.groups())) if socket_errors else 0)}


def full_handshakes(port, seconds):
    """A full TLS 1.3 handshake per connection (fresh SSLSocket, no session reuse)."""
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    request = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
    done = errors = 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port)) as raw:
                with context.wrap_socket(raw, server_hostname="example.com") as tls:
                    tls.sendall(request)
                    reply = b""
                    while chunk := tls.recv(65536):
                        reply += chunk
                    if not reply.startswith(b"HTTP/1.1 200"):
                        errors += 1
        except OSError:
            errors += 1
        done += 1
    return done, errors


def run_handshakes(port, seconds):
    code = ("import importlib.util; spec = importlib.util.spec_from_file_location('bench', %r); "
            "bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench); "
            "print(*bench.full_handshakes(%d, %d))") % (os.path.abspath(__file__), port, seconds)
    out = subprocess.run(["taskset", "-c", "1", sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=seconds + 60).stdout
    count, errors = map(int, out.strip().splitlines()[-1].split())
    return {"requests": count, "rate": count / seconds, "p99_ms": 0.0, "errors": errors}


TESTS = {
    "keep-alive": lambda s, a: run_wrk(s["port"], a.seconds),
    "new connection": lambda s, a: run_wrk(s["port"], a.seconds, close=True),
    "https keep-alive": lambda s, a: run_wrk(s["tls_port"], a.seconds, scheme="https"),
    "tls handshake": lambda s, a: run_handshakes(s["tls_port"], a.seconds),
    "101 KB keep-alive": lambda s, a: run_wrk(s["port"], a.seconds, host="large.example.com"),
    "link 302 keep-alive": lambda s, a: run_wrk(s["port"], a.seconds, host="go.example.com", path="/p/42", agent=DESKTOP),
    "stored link 302 keep-alive": lambda s, a: run_wrk(s["port"], a.seconds, host="go.example.com", path="/s42", agent=DESKTOP),
}


def start_servers(names, baseline=None, connections=1024):
    """Starts each named server (aasa-server, baseline, nginx, h2o) with the same documents and certificate;
    returns ({name: {"process", "port", "tls_port"}}, work directory) once all of them accept."""
    for tool in ["nginx", "h2o", "wrk", "taskset"]:
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            raise SystemExit(f"{tool} is missing: apt-get install nginx h2o wrk")
    binary = release_binary()
    work = tempfile.mkdtemp(prefix="aasa-bench-")
    os.chmod(work, 0o755)  # nginx workers run as www-data
    for host, body in (("example.com", SMALL), ("large.example.com", LARGE)):
        os.makedirs(f"{work}/www/{host}/.well-known")
        with open(f"{work}/www/{host}/.well-known/apple-app-site-association", "w") as f:
            f.write(body)
    subprocess.run([binary, "dev-cert", "--host", "example.com", "--host", "large.example.com", "--host", "go.example.com",
                    "--out", f"{work}/tls"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(f"{work}/tls", 0o755)
    os.chmod(f"{work}/tls/key.pem", 0o644)  # nginx reads keys as root at start; a throwaway directory
    servers = {}

    def aasa(name, path):
        port, tls_port = free_port(), free_port()
        config = f"{work}/{name}.json"
        with open(config, "w") as f:
            json.dump({"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}},
                       "sites": [
                {"hosts": [host], "file": f"www/{host}/.well-known/apple-app-site-association"}
                for host in ("example.com", "large.example.com")] + [
                {"hosts": ["go.example.com"],
                 "links": {"app": "shop", "allow": ["shop.example.com"],
                           "rules": [{"/": "/p/*", "web": "https://shop.example.com/item/{1}"}]}}],
                "server": {"listen": [f"127.0.0.1:{port}", {"address": "127.0.0.1", "port": tls_port, "tls": True}],
                           "admin": "off", "threads": 1, "accessLog": False, "maxConnections": max(10000, connections),
                           "stateDirectory": f"{name}-state",
                           "certificates": [{"hosts": ["example.com", "large.example.com", "go.example.com"],
                                             "certificate": "tls/cert.pem", "key": "tls/key.pem"}]}}, f)
        subprocess.run([path, "links", "create", "--domain", "go.example.com", "--link", "https://shop.example.com/item/42",
                        "--alias", "s42", "--config", config], check=True, stdout=subprocess.DEVNULL)
        process = subprocess.Popen(["taskset", "-c", "0", path, "serve", "--config", config],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        servers[name] = {"process": process, "port": port, "tls_port": tls_port}

    if "aasa-server" in names:
        aasa("aasa-server", binary)
    if baseline:
        aasa("baseline", baseline)

    if "nginx" in names:
        port, tls_port = free_port(), free_port()
        with open(f"{work}/nginx.conf", "w") as f:
            f.write(f"""worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log;
worker_rlimit_nofile {connections + 1000};
events {{ worker_connections {connections + 100}; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:10m;
    ssl_certificate {work}/tls/cert.pem;
    ssl_certificate_key {work}/tls/key.pem;
    server {{
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{tls_port} ssl;
        server_name example.com;
        root {work}/www/example.com;
        location = /.well-known/apple-app-site-association {{ default_type application/json; }}
    }}
    server {{
        listen 127.0.0.1:{port};
        listen 127.0.0.1:{tls_port} ssl;
        server_name large.example.com;
        root {work}/www/large.example.com;
        location = /.well-known/apple-app-site-association {{ default_type application/json; }}
    }}
    server {{
        listen 127.0.0.1:{port};
        server_name go.example.com;
        location ~ ^/p/(.*)$ {{ return 302 https://shop.example.com/item/$1; }}
        location = /s42 {{ return 302 https://shop.example.com/item/42; }}
    }}
}}
""")
        servers["nginx"] = {"process": subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", f"{work}/nginx.conf"],
                                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
                            "port": port, "tls_port": tls_port}

    if "h2o" in names:
        port, tls_port = free_port(), free_port()
        hosts = "".join(f"""  "{host}":
    paths:
      /:
        file.dir: {work}/www/{host}
""" for host in ("example.com", "large.example.com"))
        hosts += """  "go.example.com":
    paths:
      /p:
        redirect:
          url: https://shop.example.com/item
          status: 302
      /s42:
        redirect:
          url: https://shop.example.com/item/42
          status: 302
"""
        with open(f"{work}/h2o.conf", "w") as f:
            # user: root keeps H2O from switching to nobody, which could not write into the work directory.
            f.write(f"""user: root
num-threads: 1
max-connections: {connections + 100}
pid-file: {work}/h2o.pid
error-log: {work}/h2o-error.log
file.mime.setdefaulttype: application/json
ssl-session-resumption:
  mode: cache
listen:
  host: 127.0.0.1
  port: {port}
listen:
  host: 127.0.0.1
  port: {tls_port}
  ssl:
    certificate-file: {work}/tls/cert.pem
    key-file: {work}/tls/key.pem
    minimum-version: TLSv1.2
hosts:
{hosts}""")
        servers["h2o"] = {"process": subprocess.Popen(["taskset", "-c", "0", "h2o", "-c", f"{work}/h2o.conf"],
                                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
                          "port": port, "tls_port": tls_port}
    if "C limit" in names:
        # The floor: Benchmarks/limit-server.c does only what the cells need (see its comment).
        subprocess.run([shutil.which("cc") or "gcc", "-O2", "-o", f"{work}/limit-server",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "limit-server.c"), "-lssl", "-lcrypto"],
                       check=True)
        port, tls_port = free_port(), free_port()
        servers["C limit"] = {"process": subprocess.Popen(
            ["taskset", "-c", "0", f"{work}/limit-server", str(port), str(tls_port), f"{work}/tls/cert.pem", f"{work}/tls/key.pem",
             f"{work}/www/example.com/.well-known/apple-app-site-association",
             f"{work}/www/large.example.com/.well-known/apple-app-site-association"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), "port": port, "tls_port": tls_port}
    try:
        for server in servers.values():
            wait_port(server["port"])
            wait_port(server["tls_port"])
    except BaseException:
        stop_servers(servers, work)
        raise
    return servers, work


def stop_servers(servers, work):
    for server in servers.values():
        server["process"].send_signal(signal.SIGTERM)
    for server in servers.values():
        try:
            server["process"].wait(timeout=15)
        except subprocess.TimeoutExpired:
            server["process"].kill()
    shutil.rmtree(work, ignore_errors=True)


SMALL, LARGE = aasa_document(30)[:2300], aasa_document(1700)


def check_answers(servers, small, large):
    """Every server serves the same bytes for both documents and the same redirect for both link paths, so
    the cells compare like with like."""
    import urllib.request
    for name, server in servers.items():
        for host, body in (("example.com", small), ("large.example.com", large)):
            request = urllib.request.Request(
                f"http://127.0.0.1:{server['port']}/.well-known/apple-app-site-association", headers={"Host": host})
            reply = urllib.request.urlopen(request)
            assert reply.read().decode() == body, f"{name} served different bytes for {host}"
            assert reply.headers["Content-Type"].startswith("application/json"), f"{name}: {reply.headers['Content-Type']}"
        for path in ("/p/42", "/s42"):
            with socket.create_connection(("127.0.0.1", server["port"])) as sock:
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: go.example.com\r\nUser-Agent: {DESKTOP}\r\nConnection: close\r\n\r\n".encode())
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
            head = reply.split(b"\r\n\r\n")[0].decode()
            assert head.startswith("HTTP/1.1 302") and "location: https://shop.example.com/item/42" in head.lower(), \
                f"{name} link answer for {path}: {head}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--baseline", help="an earlier aasa-server binary to run beside this one")
    parser.add_argument("--settle", type=int, default=30, help="seconds after the last test before 'after' RSS")
    parser.add_argument("--tests", default=",".join(TESTS), help="comma-separated subset of: " + ", ".join(TESTS))
    parser.add_argument("--without-limit", action="store_true", help="leave out the C limit (Benchmarks/limit-server.c; needs cc and libssl-dev)")
    parser.add_argument("--fresh", action="store_true",
                        help="start every server anew for each repetition: a process that lands badly (where its pages "
                        "and code fall in the caches) then weighs on one repetition, not on all of them")
    args = parser.parse_args()
    tests = [t.strip() for t in args.tests.split(",")]
    small, large = SMALL, LARGE
    names = ["aasa-server", "nginx", "h2o"] + ([] if args.without_limit else ["C limit"])
    servers, work = start_servers(names, baseline=args.baseline)
    names = list(servers)
    results = {(name, test): [] for name in names for test in tests}
    idles = {name: [] for name in names}
    peaks = {name: [] for name in names}
    under_load = {name: 0.0 for name in names}
    try:
        for repetition in range(args.repetitions):
            if repetition == 0 or args.fresh:
                if repetition > 0:
                    stop_servers(servers, work)
                    servers, work = start_servers(names, baseline=args.baseline)
                time.sleep(1)
                for name, server in servers.items():
                    idles[name].append(rss_mb(server["process"].pid, "VmRSS"))
                check_answers(servers, small, large)
            for test in tests:
                order = names[repetition % len(names):] + names[:repetition % len(names)]
                for name in order:
                    pid = servers[name]["process"].pid
                    before = cpu_seconds(pid)
                    sampling = threading.Event()
                    sampler = threading.Thread(target=sample_rss, args=(pid, sampling, under_load, name))
                    sampler.start()
                    outcome = TESTS[test](servers[name], args)
                    sampling.set()
                    sampler.join()
                    outcome["us_per_request"] = (cpu_seconds(pid) - before) * 1e6 / max(1, outcome["requests"])
                    results[(name, test)].append(outcome)
                    print(f"  rep {repetition + 1} {test:18} {name:12} {outcome['rate']:9.0f} req/s  "
                          f"p99 {outcome['p99_ms']:6.2f} ms  {outcome['us_per_request']:7.2f} µs/req  "
                          f"errors {outcome['errors']}", file=sys.stderr)
            if repetition == args.repetitions - 1 or args.fresh:
                for name, server in servers.items():
                    peaks[name].append(rss_mb(server["process"].pid, "VmHWM"))
        time.sleep(args.settle)
        after = {name: rss_mb(s["process"].pid, "VmRSS") for name, s in servers.items()}
    finally:
        stop_servers(servers, work)

    def median(name, test, key):
        return statistics.median(r[key] for r in results[(name, test)])

    idle = {name: statistics.median(values) for name, values in idles.items()}
    peak = {name: statistics.median(values) for name, values in peaks.items()}
    others = [n for n in servers if n != "aasa-server"]
    processes = "fresh processes for each repetition" if args.fresh else "one process per server for the whole run"
    print(f"\nMedians of {args.repetitions} × {args.seconds} s ({processes}), every server on CPU 0 with one worker, "
          f"client on CPU 1; documents {len(small)} B and {len(large)} B:\n")
    print("| cell | " + " | ".join(servers) + " | " + " | ".join(f"aasa/{n}" for n in others) + " |")
    print("|---|" + "---:|" * (len(servers) + len(others)))
    for test in tests:
        values = {name: median(name, test, "us_per_request") for name in servers}
        print(f"| {test}, server CPU µs/request | " + " | ".join(f"{values[n]:.2f}" for n in servers) + " | "
              + " | ".join(f"{values['aasa-server'] / values[n]:.2f}" for n in others) + " |")
    for label, table in (("idle RSS MB", idle), ("peak RSS MB", peak), ("peak RSS MB under load", under_load),
                         (f"RSS MB {args.settle} s after", after)):
        print(f"| {label} | " + " | ".join(f"{table[n]:.1f}" for n in servers) + " | "
              + " | ".join(f"{table['aasa-server'] / table[n]:.2f}" for n in others) + " |")
    # The servers of one repetition ran minutes apart at most, so the ratio within a repetition leaves out
    # what the machine did between repetitions; its spread says how far a single run can be trusted.
    print("\nRatios within each repetition (aasa-server over the other server, same repetition), median [lowest–highest] "
          "and how many repetitions were at or below 1:")
    for test in tests:
        parts = []
        for other in others:
            ratios = sorted(a["us_per_request"] / b["us_per_request"]
                            for a, b in zip(results[("aasa-server", test)], results[(other, test)]))
            at_or_below = sum(1 for r in ratios if r <= 1)
            parts.append(f"{other} {statistics.median(ratios):.2f} [{ratios[0]:.2f}–{ratios[-1]:.2f}] {at_or_below}/{len(ratios)}")
        print(f"- {test}: " + "; ".join(parts))
    print("\nreq/s (median): " + "; ".join(
        f"{test}: " + ", ".join(f"{n} {median(n, test, 'rate'):.0f}" for n in servers) for test in tests))
    errors = sum(r["errors"] for rs in results.values() for r in rs)
    print(f"\nnon-2xx responses and socket errors across all runs: {errors}")


if __name__ == "__main__":
    main()
