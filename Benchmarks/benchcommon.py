"""Helpers shared by the benchmark scripts (loopback only)."""
import os
import random
import socket
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
            low, high = (int(value) for value in ports.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


_handed_out = set()


def free_port():
    """A port on 127.0.0.1 that nothing listens on right now, for a server told its port in its config.

    Picked below the kernel's ephemeral range: a port the kernel chose for `bind(0)` goes back into that
    range when closed, where any outgoing connection (a client, curl, the server's own upstreams) may take
    it before the server binds it. No port is handed out twice by one script."""
    low, _ = _ephemeral_range()
    floor = 20000 if low > 21000 else 1024
    generator = random.SystemRandom()
    for _ in range(1000):
        port = generator.randrange(floor, low)
        if port in _handed_out:
            continue
        probe = socket.socket()
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            probe.close()
        _handed_out.add(port)
        return port
    raise SystemExit(f"no free loopback port between {floor} and {low}")


def release_binary(defines=()):
    """Builds aasa-server as deployed (release, Swift runtime linked statically) and returns its path.
    `defines`: compilation conditions of a counterfactual build, kept in a build directory of its own."""
    options = [argument for name in defines for argument in ("-Xswiftc", f"-D{name}")]
    if defines:
        options += ["--build-path", ".build/" + "-".join(name.lower() for name in defines)]
    subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "aasa-server", *options], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(["swift", "build", "-c", "release", "--show-bin-path", *options], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip() + "/aasa-server"
