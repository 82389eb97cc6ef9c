#!/usr/bin/env python3
"""Side-by-side cost of serving a ~2 KB AASA file: aasa-server versus Debian's nginx.

Method (../shared/reference/perf-baseline.md): each server runs one worker pinned to CPU 0, wrk runs on
CPU 1; tests are interleaved (every server gets a test, then the next test), the order rotates per
repetition; medians are reported. The number to compare is server CPU microseconds per request:
utime+stime of the server's process tree from /proc, divided by the requests wrk completed.

Usage: Benchmarks/serve-vs-nginx.py [--seconds 8] [--repetitions 3]
Needs: nginx, wrk (apt-get install nginx wrk); builds aasa-server in release mode with the Swift runtime
linked statically (--static-swift-stdlib), as it is deployed.
Traffic goes to 127.0.0.1 only, and every run is bounded by --seconds.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import ROOT, free_port, release_binary  # noqa: E402
TICKS = os.sysconf("SC_CLK_TCK")


def aasa_document():
    components = [{"/": "/admin/*", "exclude": True, "comment": "admin stays in Safari"}]
    components += [{"/": f"/collection-{i}/*", "comment": f"collection {i} pages"} for i in range(30)]
    document = {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": components}]},
                "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}
    text = json.dumps(document, separators=(",", ":"))
    return text[:2300] if len(text) <= 2300 else text


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


def wait_port(port, timeout=10):
    import socket
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"port {port} did not open")


def run_wrk(port, seconds, close, scheme="http"):
    command = ["taskset", "-c", "1", "wrk", "-t1", "-c64", f"-d{seconds}s", "--latency", "-H", "Host: example.com"]
    if close:
        command = ["taskset", "-c", "1", "wrk", "-t1", "-c16", f"-d{seconds}s", "--latency", "-H", "Host: example.com",
                   "-H", "Connection: close"]
    command.append(f"{scheme}://127.0.0.1:{port}/.well-known/apple-app-site-association")
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    return {"requests": requests, "rate": rate, "p99_ms": float(p99.group(1)) * scale,
            "non2xx": int(errors.group(1)) if errors else 0,
            "socket_errors": sum(map(int, socket_errors.groups())) if socket_errors else 0}


def full_handshakes(port, seconds):
    """A client that forces a full TLS handshake per connection (fresh SSLSocket, no session reuse),
    since wrk and h2load resume sessions and hide the cost. Returns handshakes completed."""
    import socket
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    request = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
    done = 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with context.wrap_socket(raw, server_hostname="example.com") as tls:
                tls.sendall(request)
                while tls.recv(65536):
                    pass
        done += 1
    return done


def run_handshakes(port, seconds):
    # Run the Python client pinned to CPU 1 in a child process, like wrk.
    code = ("import sys; sys.path.insert(0, %r); import importlib.util; "
            "spec = importlib.util.spec_from_file_location('bench', %r); bench = importlib.util.module_from_spec(spec); "
            "spec.loader.exec_module(bench); print(bench.full_handshakes(%d, %d))") % (
        os.path.dirname(__file__), os.path.abspath(__file__), port, seconds)
    out = subprocess.run(["taskset", "-c", "1", sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=seconds + 60).stdout
    count = int(out.strip().splitlines()[-1])
    return {"requests": count, "rate": count / seconds, "p99_ms": 0.0, "non2xx": 0, "socket_errors": 0}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    for tool in ["nginx", "wrk", "taskset"]:
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            raise SystemExit(f"{tool} is missing: apt-get install nginx wrk")
    binary = release_binary()

    work = tempfile.mkdtemp(prefix="aasa-bench-")
    os.chmod(work, 0o755)  # nginx workers run as www-data
    body = aasa_document()
    os.makedirs(f"{work}/www/.well-known")
    with open(f"{work}/www/.well-known/apple-app-site-association", "w") as f:
        f.write(body)
    aasa_port, nginx_port = free_port(), free_port()
    aasa_tls_port, nginx_tls_port = free_port(), free_port()
    # One ECDSA P-256 certificate for both servers (what the baseline measured).
    subprocess.run([binary, "dev-cert", "--host", "example.com", "--out", f"{work}/tls"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(f"{work}/tls", 0o755)
    os.chmod(f"{work}/tls/key.pem", 0o644)  # nginx reads keys as root at start; kept simple for a throwaway dir
    with open(f"{work}/aasa.json", "w") as f:
        json.dump({"version": 1, "sites": [{"hosts": ["example.com"], "file": "www/.well-known/apple-app-site-association"}],
                   "server": {"listen": [f"127.0.0.1:{aasa_port}", {"address": "127.0.0.1", "port": aasa_tls_port, "tls": True}],
                              "admin": "off", "threads": 1, "accessLog": False,
                              "certificates": [{"hosts": ["example.com"], "certificate": "tls/cert.pem", "key": "tls/key.pem"}]}}, f)
    with open(f"{work}/nginx.conf", "w") as f:
        f.write(f"""worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log;
events {{ worker_connections 1024; }}
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
        listen 127.0.0.1:{nginx_port};
        listen 127.0.0.1:{nginx_tls_port} ssl;
        server_name example.com;
        root {work}/www;
        location = /.well-known/apple-app-site-association {{ default_type application/json; }}
    }}
}}
""")
    servers = {
        "aasa-server": subprocess.Popen(["taskset", "-c", "0", binary, "serve", "--config", f"{work}/aasa.json"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        "nginx": subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", f"{work}/nginx.conf"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    }
    ports = {"aasa-server": aasa_port, "nginx": nginx_port}
    tls_ports = {"aasa-server": aasa_tls_port, "nginx": nginx_tls_port}
    tests = ("keep-alive", "close", "https keep-alive", "tls handshake")
    try:
        for name, port in ports.items():
            wait_port(port)
        time.sleep(1)
        idle = {name: rss_mb(process.pid, "VmRSS") for name, process in servers.items()}
        # Same bytes from both?
        import urllib.request
        for name, port in ports.items():
            request = urllib.request.Request(f"http://127.0.0.1:{port}/.well-known/apple-app-site-association",
                                             headers={"Host": "example.com"})
            assert urllib.request.urlopen(request).read().decode() == body, f"{name} served different bytes"

        results = {(name, test): [] for name in servers for test in tests}
        names = list(servers)
        for repetition in range(args.repetitions):
            for test in tests:
                order = names[repetition % 2:] + names[:repetition % 2]
                for name in order:
                    pid = servers[name].pid
                    before = cpu_seconds(pid)
                    if test == "tls handshake":
                        outcome = run_handshakes(tls_ports[name], args.seconds)
                    elif test == "https keep-alive":
                        outcome = run_wrk(tls_ports[name], args.seconds, close=False, scheme="https")
                    else:
                        outcome = run_wrk(ports[name], args.seconds, close=(test == "close"))
                    outcome["us_per_request"] = (cpu_seconds(pid) - before) * 1e6 / max(1, outcome["requests"])
                    results[(name, test)].append(outcome)
                    print(f"  rep {repetition + 1} {test:10} {name:12} {outcome['rate']:9.0f} req/s  "
                          f"p99 {outcome['p99_ms']:6.2f} ms  {outcome['us_per_request']:6.2f} µs/req  "
                          f"errors {outcome['non2xx'] + outcome['socket_errors']}", file=sys.stderr)
        peak = {name: rss_mb(process.pid, "VmHWM") for name, process in servers.items()}
    finally:
        for process in servers.values():
            process.send_signal(signal.SIGTERM)
        for process in servers.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)

    def median(name, test, key):
        return statistics.median(r[key] for r in results[(name, test)])

    print(f"\nMedians of {args.repetitions} × {args.seconds} s, server on CPU 0, wrk on CPU 1, "
          f"{len(body)}-byte document:\n")
    print("| test | metric | aasa-server | nginx | ratio (aasa/nginx) |")
    print("|---|---|---:|---:|---:|")
    for test in tests:
        keys = (("us_per_request", "server CPU µs/request", "{:.2f}"), ("rate", "req/s", "{:.0f}"),
                ("p99_ms", "p99 latency ms", "{:.2f}"))
        if test == "tls handshake":
            keys = (("us_per_request", "server CPU µs per full handshake + GET", "{:.1f}"),)
        for key, label, fmt in keys:
            a, n = median("aasa-server", test, key), median("nginx", test, key)
            print(f"| {test} | {label} | {fmt.format(a)} | {fmt.format(n)} | {a / n:.2f} |")
    print(f"| idle | RSS MB | {idle['aasa-server']:.1f} | {idle['nginx']:.1f} | {idle['aasa-server'] / idle['nginx']:.2f} |")
    print(f"| peak | RSS MB | {peak['aasa-server']:.1f} | {peak['nginx']:.1f} | {peak['aasa-server'] / peak['nginx']:.2f} |")
    errors = sum(r["non2xx"] + r["socket_errors"] for rs in results.values() for r in rs)
    print(f"\nnon-2xx responses and socket errors across all runs: {errors}")


if __name__ == "__main__":
    main()
