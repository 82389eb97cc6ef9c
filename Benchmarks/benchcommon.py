"""Helpers shared by the benchmark scripts (loopback only)."""
import os
import socket
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    """A port on 127.0.0.1 that nothing listens on right now."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


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
