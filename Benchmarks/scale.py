#!/usr/bin/env python3
"""Scale: many hosts on one server. For each host count it measures the time from start to serving, the
resident memory once ready, once settled and at its peak since the start (loading, then the snapshot written), the keep-alive cost per request (server CPU time per request,
as serve-vs-nginx.py measures it) next to a 10-host config, and a one-site edit: how long the reload takes
and the resident-memory peak while it runs.

Config shape (as in the scale issue): one small generated site per two hosts (apex and www), three
components and webcredentials. --layout single writes one config file; --layout include writes a small
config with "include": ["sites.d/*.json"] and the sites in files of --per-file sites each (a one-site edit
then rewrites one of those files).

Method: the release build (Swift runtime static), one event loop, access log off. The server starts on
both CPUs (loading is parallel), serving is measured with the server pinned to CPU 0 and wrk on CPU 1.
The reload is asked for with POST /reload; its JSON answer carries the time from reading the first file
to the new snapshot in force. The peak is VmHWM after resetting it (/proc/PID/clear_refs) just before the
reload. Loopback only; every wait is bounded.

The server keeps a state directory: after the edit it is stopped and started again with no file changed
since the snapshot (`compiled-sites`) it wrote after the edit's reload, and the table gives that restart's
time beside the first start's.

Beside each start, the same run times CPython reading the same files with its C `json` module (every
file read and json.load-ed, one process, files already in the page cache): the time a server would need
merely to parse its config in the most common scripting runtime, the yardstick of the scale issue.

With --links, every other site also has link rules (docs/links.md): two rules, a web template and a
preview, the cost per rule being the difference from a run without.

Usage: Benchmarks/scale.py [--hosts 10000,100000,1000000] [--layout single|include] [--per-file 500]
                           [--binary PATH] [--seconds 5] [--links]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import free_port, release_binary  # noqa: E402


def site(i, revision=0):
    product = f"/product/{i}/*" if revision == 0 else f"/product/{i}/r{revision}/*"
    return {"hosts": [f"shop{i}.example.com", f"www.shop{i}.example.com"],
            "applinks": {"details": [{"apps": ["shop"], "components": [
                {"/": "/admin/*", "exclude": True}, {"/": product}, {"/": "/cart", "?": {"id": "?*"}}]}]},
            "webcredentials": {"apps": ["shop"]},
            **({"links": {"app": "shop", "rules": [
                {"/": product, "web": f"https://www.shop{i}.example.com/p/{{1}}",
                 "preview": {"title": f"Shop {i}", "image": f"https://cdn.example.com/{i}.png"}},
                {"/": "/cart", "?": {"id": "?*"}, "web": f"https://www.shop{i}.example.com/cart?{{query}}"}]}}
               if WITH_LINKS and i % 2 == 0 else {})}


WITH_LINKS = False
APPS = {"shop": "ABCDE12345.com.example.shop"}


def write(path, value):
    with open(path + ".tmp", "w") as handle:
        json.dump(value, handle, separators=(",", ":"))
    os.replace(path + ".tmp", path)


def make_config(directory, hosts, layout, per_file, port, admin):
    sites = hosts // 2
    server = {"listen": [f"127.0.0.1:{port}"], "admin": f"127.0.0.1:{admin}", "threads": 1, "accessLog": False,
              "reload": {"watch": False}, "stateDirectory": "state"}
    base = {"version": 1, "apps": APPS, "server": server}
    if layout == "single":
        base["sites"] = [site(i) for i in range(sites)]
        write(os.path.join(directory, "config.json"), base)
    else:
        os.makedirs(os.path.join(directory, "sites.d"), exist_ok=True)
        base["sites"] = []
        base["include"] = ["sites.d/*.json"]
        for start in range(0, sites, per_file):
            write(os.path.join(directory, "sites.d", f"tenants-{start // per_file:06d}.json"),
                  [site(i) for i in range(start, min(sites, start + per_file))])
        write(os.path.join(directory, "config.json"), base)


def edit_one_site(directory, hosts, layout, per_file, revision):
    """Changes site 0's product path; returns the host whose document changed."""
    sites = hosts // 2
    if layout == "single":
        path = os.path.join(directory, "config.json")
        with open(path) as handle:
            config = json.load(handle)
        config["sites"][0] = site(0, revision)
        write(path, config)
    else:
        write(os.path.join(directory, "sites.d", "tenants-000000.json"),
              [site(0, revision)] + [site(i) for i in range(1, min(sites, per_file))])
    return "shop0.example.com"


def status_field(pid, name):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(name + ":"):
                return int(line.split()[1]) / 1024  # MB
    return 0.0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post_reload(admin):
    request = urllib.request.Request(f"http://127.0.0.1:{admin}/reload", method="POST")
    return json.loads(urllib.request.urlopen(request, timeout=120).read())


def keep_alive_cost(pid, port, host, seconds):
    """Server CPU µs per keep-alive request, wrk pinned to CPU 1."""
    before = cpu_seconds(pid)
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c64", f"-d{seconds}s", "-H", f"Host: {host}",
                          f"http://127.0.0.1:{port}/.well-known/apple-app-site-association"],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    used = cpu_seconds(pid) - before
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return used / requests * 1e6


PYTHON_READ = """
import glob, json, os, sys, time
started = time.monotonic()
for path in [sys.argv[1]] + sorted(glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "sites.d", "*.json"))):
    with open(path, "rb") as handle:
        json.load(handle)
print(time.monotonic() - started)
"""


def python_read_seconds(config):
    """CPython's json.load of the config and every included file, timed inside the interpreter."""
    out = subprocess.run([sys.executable, "-c", PYTHON_READ, config], capture_output=True, text=True, timeout=600, check=True)
    return float(out.stdout.strip())


def measure(binary, hosts, layout, per_file, seconds):
    directory = tempfile.mkdtemp(prefix="aasa-scale-")
    try:
        port, admin = free_port(), free_port()
        make_config(directory, hosts, layout, per_file, port, admin)
        # The files were just written: flush them first, or the kernel writing back ~100 MB competes with
        # the start-up being measured (a server starts from files already on disk).
        os.sync()
        time.sleep(1)
        python_seconds = python_read_seconds(os.path.join(directory, "config.json"))
        server, log, ready = start_server(binary, directory, "stderr.log")
        try:
            rss_ready = status_field(server.pid, "VmRSS")
            time.sleep(12)  # memory is returned after 10 s without reloads
            rss_settled = status_field(server.pid, "VmRSS")
            # The most it held since exec: loading, then the snapshot written in the background.
            start_peak = status_field(server.pid, "VmHWM")
            subprocess.run(["taskset", "-p", "-c", "0", str(server.pid)], capture_output=True)
            for task in os.listdir(f"/proc/{server.pid}/task"):
                subprocess.run(["taskset", "-p", "-c", "0", task], capture_output=True)
            cost = keep_alive_cost(server.pid, port, f"shop{hosts // 4}.example.com", seconds)
            edited = edit_one_site(directory, hosts, layout, per_file, 1)
            with open(f"/proc/{server.pid}/clear_refs", "w") as handle:
                handle.write("5")
            steady = status_field(server.pid, "VmRSS")
            answer = post_reload(admin)
            peak = status_field(server.pid, "VmHWM")
            served = urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/.well-known/apple-app-site-association", headers={"Host": edited}), timeout=10).read()
            assert b"/r1/" in served, "the edit is not served"
            # A restart with every tenant file unchanged since the snapshot the server keeps in its state
            # directory (written in the background after the start, and again after the edit's reload).
            wait_for(log, lambda text: text.count("kept for the next start") >= (2 if layout == "include" else 0), 120)
            stop_server(server)
            restarted, restart_log, restart_ready = start_server(binary, directory, "restart.log")
            rss_restart = status_field(restarted.pid, "VmRSS")
            restart_log.seek(0)
            restored = re.search(r"(\d+) included files restored", restart_log.read())
            stop_server(restarted)
            return {"hosts": hosts, "ready_s": ready, "python_json_s": python_seconds, "restart_ready_s": restart_ready,
                    "restored_files": int(restored.group(1)) if restored else 0, "rss_restart_mb": rss_restart, "rss_ready_mb": rss_ready, "rss_settled_mb": rss_settled,
                    "rss_start_peak_mb": start_peak,
                    "keepalive_us": cost, "reload_ms": answer.get("milliseconds"), "reload_result": answer.get("result"),
                    "rss_before_reload_mb": steady, "rss_peak_reload_mb": peak}
        finally:
            stop_server(server)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def wait_for(log, done, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        log.seek(0)
        if done(log.read()):
            return
        time.sleep(0.05)
    raise RuntimeError(f"not seen within {seconds} s")


def start_server(binary, directory, log_name):
    """Starts the server on the directory's config; returns it, its log and the seconds until it served."""
    log = open(os.path.join(directory, log_name), "w+")
    started = time.monotonic()
    server = subprocess.Popen([binary, "serve", "--config", os.path.join(directory, "config.json")],
                              stdout=subprocess.DEVNULL, stderr=log)
    deadline = started + 120
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read()
        if "serving " in text:
            return server, log, time.monotonic() - started
        if server.poll() is not None:
            raise RuntimeError(f"server exited: {text[-2000:]}")
        time.sleep(0.005)
    stop_server(server)
    raise RuntimeError("not ready within 120 s")


def stop_server(server):
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="10000,100000,1000000")
    parser.add_argument("--layout", choices=["single", "include"], default="single")
    parser.add_argument("--per-file", type=int, default=500)
    parser.add_argument("--binary")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--links", action="store_true", help="link rules on every other site")
    arguments = parser.parse_args()
    if arguments.links:
        global WITH_LINKS, APPS
        WITH_LINKS = True
        APPS = {"shop": {"apple": "ABCDE12345.com.example.shop", "appStoreID": 123456789}}
    binary = arguments.binary or release_binary()
    rows = [measure(binary, 10, arguments.layout, arguments.per_file, arguments.seconds)]
    for hosts in [int(text) for text in arguments.hosts.split(",")]:
        rows.append(measure(binary, hosts, arguments.layout, arguments.per_file, arguments.seconds))
    print(f"binary {binary}, layout {arguments.layout}" + (f" ({arguments.per_file} sites per file)" if arguments.layout == "include" else ""))
    print("| hosts | ready after start | restart, from the snapshot | CPython json.load | RSS ready | RSS settled | RSS peak since start | keep-alive µs/req | one-site edit reload | RSS peak during it |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['hosts']:,} | {row['ready_s']:.2f} s | {row['restart_ready_s']:.2f} s ({row['restored_files']} files) | "
              f"{row['python_json_s']:.2f} s | {row['rss_ready_mb']:.0f} MB | {row['rss_settled_mb']:.0f} MB | {row['rss_start_peak_mb']:.0f} MB | "
              f"{row['keepalive_us']:.2f} | {row['reload_ms']} ms ({row['reload_result']}) | "
              f"{row['rss_peak_reload_mb']:.0f} MB ({row['rss_peak_reload_mb'] / max(row['rss_before_reload_mb'], 1):.2f}×) |")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
