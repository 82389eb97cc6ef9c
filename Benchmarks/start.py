#!/usr/bin/env python3
"""Start-up: how long from exec until the first AASA answer, aasa-server beside nginx and H2O in one run.

Each server gets the configuration serve-vs-nginx.py gives it (the same two documents and certificate,
plain and TLS listeners, one worker; aasa-server with its link site and its link store). Each start is
timed from just before exec until a GET for the AASA on the plain port answers 200: "listening" alone
would flatter a server whose port opens before it can answer (nginx's master binds, its worker answers).
The client polls every millisecond; a start is bounded by --timeout. Starts are interleaved (every
server once, then again, the order rotating) and pinned to CPU 0 like the serving benchmark; medians.

--baseline PATH times an earlier aasa-server build beside this checkout's (its own config file, state
directory and ports, as serve-vs-nginx.py gives it).

Each aasa-server start after the first finds the hosted documents the one before kept in its state
directory's compiled-sites snapshot (a restart); --first-start removes that snapshot before every start,
so each one checks and compresses the documents as a server's very first start does.

Usage: Benchmarks/start.py [--repetitions 15] [--baseline PATH] [--timeout 10] [--first-start]
Needs: nginx, h2o (apt-get install nginx h2o). Loopback only.
"""
import argparse
import importlib.util
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("serve_vs_nginx", os.path.join(HERE, "serve-vs-nginx.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

REQUEST = b"GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(REQUEST)
            reply = b""
            while len(reply) < 12 and (chunk := sock.recv(4096)):
                reply += chunk
            return reply.startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def time_start(command, port, timeout):
    """Seconds from exec to the first 200; the server is stopped again before returning."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not answers(port):
            if process.poll() is not None:
                raise SystemExit(f"{command[3]} exited with {process.returncode} before answering")
            if time.monotonic() - started > timeout:
                raise SystemExit(f"{command[3]} did not answer within {timeout} s")
            time.sleep(0.001)
        return time.monotonic() - started
    finally:
        family = bench.tree_pids(process.pid)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        # The next start must not share CPU 0 with this server's helpers on their way out (H2O leaves
        # one for a moment after its main process is gone: the start after it was 20 ms slower).
        deadline = time.monotonic() + 5
        while any(os.path.exists(f"/proc/{pid}") for pid in family) and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=15)
    parser.add_argument("--baseline", help="an earlier aasa-server binary to time beside this one")
    parser.add_argument("--timeout", type=float, default=10)
    parser.add_argument("--first-start", action="store_true",
                        help="remove aasa-server's compiled-sites snapshot before each start (every start a first one)")
    args = parser.parse_args()
    # serve-vs-nginx.py writes the configurations and starts each server once (which also creates the
    # link store): its processes are stopped and their command lines timed from here on.
    servers, work = bench.start_servers(["aasa-server", "nginx", "h2o"], baseline=args.baseline)
    commands = {}
    try:
        for name, server in servers.items():
            commands[name] = (server["process"].args, server["port"])
        for server in servers.values():
            server["process"].send_signal(signal.SIGTERM)
            server["process"].wait(timeout=15)
        names = list(commands)
        times = {name: [] for name in names}
        for repetition in range(args.repetitions):
            order = names[repetition % len(names):] + names[:repetition % len(names)]
            for name in order:
                command, port = commands[name]
                # A port is free again once its last server is gone; wait for nothing to answer there.
                while answers(port):
                    time.sleep(0.01)
                snapshot = os.path.join(work, f"{name}-state", "compiled-sites")
                if args.first_start and os.path.exists(snapshot):
                    os.remove(snapshot)
                times[name].append(time_start(command, port, args.timeout))
    finally:
        bench.stop_servers({}, work)
    kind = "first starts (no snapshot)" if args.first_start else "starts"
    print(f"Start to the first 200, medians of {args.repetitions} interleaved {kind} (min–max), each server pinned to CPU 0:\n")
    print("| server | start to first answer | range |")
    print("|---|---:|---:|")
    for name in names:
        values = times[name]
        print(f"| {name} | {statistics.median(values) * 1000:.1f} ms | {min(values) * 1000:.1f}–{max(values) * 1000:.1f} ms |")
    base = statistics.median(times["aasa-server"])
    print("\n" + "; ".join(f"aasa-server / {name}: {base / statistics.median(times[name]):.2f}" for name in names
                           if name != "aasa-server"))


if __name__ == "__main__":
    main()
