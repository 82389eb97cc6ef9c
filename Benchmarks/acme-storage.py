#!/usr/bin/env python3
"""Many stored ACME certificates: what they cost in memory and what the first handshake per host costs.

Fills an ACME storage directory with --hosts certificates (one per host hN.bench.test, each its own file
as the server stores them; the same wildcard certificate inside, so generating them takes seconds), then
starts the release build with `server.acme` on that storage (on demand, no config hosts: nothing is
ordered) and measures, over TLS handshakes on loopback from this process (Python's ssl, no verification):

- resident memory when settled, and again after --cold distinct hosts had their first handshake (each
  loads its certificate from storage into a bounded cache of 1,000);
- the first handshake's latency (certificate read from storage) and a repeated one's (cached), medians;
- for scale, the same handshakes against the same server serving that certificate from a file.

Usage: Benchmarks/acme-storage.py [--hosts 100000] [--cold 5000] [--binary PATH]
"""
import argparse
import json
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def handshake_ms(port, host):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host):
            pass
    return (time.perf_counter() - started) * 1000


def start(binary, config_path, log_path):
    log = open(log_path, "w")
    process = subprocess.Popen([binary, "serve", "--config", config_path], stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if "serving " in open(log_path).read():
            return process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    sys.exit(f"the server did not start:\n{open(log_path).read()}")


def settle(pid, seconds=3):
    """Waits until RSS stops changing (bounded)."""
    last, deadline = rss_mb(pid), time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(seconds)
        now = rss_mb(pid)
        if abs(now - last) < 0.5:
            return now
        last = now
    return rss_mb(pid)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=100_000)
    parser.add_argument("--cold", type=int, default=5_000)
    parser.add_argument("--binary")
    arguments = parser.parse_args()
    binary = arguments.binary or release_binary()
    work = tempfile.mkdtemp(prefix="aasa-acme-bench-")
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
                        "-subj", "/CN=*.bench.test", "-addext", "subjectAltName=DNS:*.bench.test", "-keyout", f"{work}/key.pem",
                        "-out", f"{work}/cert.pem"], check=True, capture_output=True)
        bundle = open(f"{work}/cert.pem").read() + open(f"{work}/key.pem").read()
        now = int(time.time())
        meta = json.dumps({"notBefore": now - 60, "notAfter": now + 30 * 86400, "renewAt": now + 20 * 86400, "issuer": "bench",
                           "obtainedAt": now})
        started = time.monotonic()
        for index in range(arguments.hosts):
            # Under the CA's folder, as the server stores them for the directory URL below (its host, port, path).
            directory = f"{work}/storage/certificates/127.0.0.1-9-dir/h{index}.bench.test"
            os.makedirs(directory)
            with open(f"{directory}/certificate.pem", "w") as handle:
                handle.write(bundle)
            with open(f"{directory}/meta.json", "w") as handle:
                handle.write(meta)
        print(f"storage: {arguments.hosts:,} certificates written in {time.monotonic() - started:.1f} s")
        results = {}
        for mode in ("acme", "file"):
            port = free_port()
            server = {"listen": [{"address": "127.0.0.1", "port": port, "tls": True}], "admin": None, "accessLog": False}
            if mode == "acme":
                server["acme"] = {"directory": "https://127.0.0.1:9/dir", "agreeToTerms": True, "storage": f"{work}/storage",
                                  # Only an order would ask, and nothing here is ordered: every host is stored.
                                  "hosts": "none", "onDemand": {"ask": "http://127.0.0.1:9/never-asked"}}
            else:
                server["certificates"] = [{"hosts": ["*.bench.test"], "certificate": f"{work}/cert.pem", "key": f"{work}/key.pem"}]
            config = {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
                      "sites": [{"hosts": ["*.bench.test"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}],
                      "server": server}
            if server["admin"] is None:
                del server["admin"]
            config_path = f"{work}/config-{mode}.json"
            with open(config_path, "w") as handle:
                json.dump(config, handle)
            process = start(binary, config_path, f"{work}/{mode}.log")
            try:
                idle = settle(process.pid)
                cold = [handshake_ms(port, f"h{index}.bench.test") for index in range(arguments.cold)]
                warm_hosts = [f"h{index}.bench.test" for index in range(arguments.cold - 500, arguments.cold)]
                warm = [handshake_ms(port, host) for host in warm_hosts]
                after = settle(process.pid)
                results[mode] = (idle, after, statistics.median(cold), statistics.quantiles(cold, n=100)[98], statistics.median(warm))
            finally:
                process.terminate()
                process.wait(timeout=30)
        print(f"{'':28}{'ACME storage':>16}{'file certificate':>20}")
        labels = ["RSS settled (MB)", f"RSS after {arguments.cold:,} hosts (MB)", "first handshake, median (ms)",
                  "first handshake, p99 (ms)", "repeat handshake, median (ms)"]
        for index, label in enumerate(labels):
            print(f"{label:28}{results['acme'][index]:>16.2f}{results['file'][index]:>20.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
