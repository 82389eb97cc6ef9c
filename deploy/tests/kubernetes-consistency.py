#!/usr/bin/env python3
"""The Kubernetes manifests must agree with each other and with the server they run.

Schema validity is kubernetes-validate's job; this checks what no schema can: the kustomization lists
exactly the manifests, the ConfigMap's config is valid (aasa-server validate), the container ports are
the config's listeners, the probes ask paths the admin listener answers, the Service and Ingress point at
ports that exist, the Ingress never redirects the AASA paths, the pod runs as the image's user, and the
grace period outlasts preStop plus the drain.

Usage: kubernetes-consistency.py ROOT AASA_SERVER_BINARY
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import yaml

root = pathlib.Path(sys.argv[1])
binary = sys.argv[2]
directory = root / "deploy" / "kubernetes"
problems = []


def problem(text):
    problems.append(text)


documents = {}
for path in sorted(directory.glob("*.yaml")):
    for document in yaml.safe_load_all(path.read_text()):
        if document:
            documents.setdefault(document["kind"], []).append((path.name, document))


def one(kind):
    found = documents.get(kind, [])
    if len(found) != 1:
        problem(f"expected exactly one {kind}, found {len(found)}")
        return None
    return found[0][1]


kustomization = one("Kustomization")
if kustomization is not None:
    listed = set(kustomization.get("resources", []))
    present = {path.name for path in directory.glob("*.yaml")} - {"kustomization.yaml"}
    for name in sorted(listed - present):
        problem(f"kustomization.yaml lists {name}, which does not exist")
    for name in sorted(present - listed):
        problem(f"kustomization.yaml does not list {name}")

configmap = one("ConfigMap")
deployment = one("Deployment")
service = one("Service")
ingress = one("Ingress")
if None in (configmap, deployment, service, ingress):
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)

config_text = configmap["data"].get("config.json")
config = {}
if config_text is None:
    problem("the ConfigMap has no config.json")
else:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        file.write(config_text)
        file.flush()
        result = subprocess.run([binary, "validate", "--config", file.name], capture_output=True, text=True)
        if result.returncode != 0:
            problem("the ConfigMap's config.json does not validate:\n" + result.stdout + result.stderr)
    try:
        config = json.loads(config_text)
    except json.JSONDecodeError as error:
        problem(f"the ConfigMap's config.json is not JSON: {error}")
server = config.get("server", {})


def port_of(listener):
    text = listener if isinstance(listener, str) else f"{listener.get('address', '')}:{listener.get('port')}"
    return int(text.rsplit(":", 1)[1])


def address_of(listener):
    text = listener if isinstance(listener, str) else listener.get("address", "")
    return text.rsplit(":", 1)[0].strip("[]") if isinstance(listener, str) else text


listen_ports = {port_of(listener) for listener in server.get("listen", ["0.0.0.0:8080"])}
for listener in server.get("listen", []):
    if address_of(listener) in ("127.0.0.1", "::1", "localhost"):
        problem(f"listener {listener} is loopback only: the Service cannot reach it")
admin = server.get("admin", "127.0.0.1:9090")
admin_port = port_of(admin) if admin else None
health_path = server.get("healthPath")

pod = deployment["spec"]["template"]["spec"]
containers = pod["containers"]
container = containers[0]
ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
if ports.get("http") not in listen_ports:
    problem(f"containerPort 'http' is {ports.get('http')}, the config listens on {sorted(listen_ports)}")
if admin_port is not None and ports.get("admin") != admin_port:
    problem(f"containerPort 'admin' is {ports.get('admin')}, the config's admin listener is on {admin_port}")
if admin and address_of(admin) in ("127.0.0.1", "::1", "localhost"):
    problem(f"the admin listener {admin} is loopback only: the kubelet's probes cannot reach it")
answered = {"/healthz", "/readyz", "/metrics"} | ({health_path} if health_path else set())
for probe_name in ("readinessProbe", "livenessProbe", "startupProbe"):
    probe = container.get(probe_name)
    if not probe:
        continue
    http = probe.get("httpGet", {})
    if http.get("path") not in answered:
        problem(f"{probe_name} asks {http.get('path')}, which the admin listener does not answer ({sorted(answered)})")
    if http.get("port") not in ("admin", admin_port):
        problem(f"{probe_name} uses port {http.get('port')}, not the admin listener")
if "readinessProbe" not in container:
    problem("the container has no readinessProbe: a draining pod would keep receiving traffic")

arguments = container.get("args", [])
if "--config" in arguments:
    config_path = arguments[arguments.index("--config") + 1]
    mounts = {mount["mountPath"]: mount["name"] for mount in container.get("volumeMounts", [])}
    directory_path = str(pathlib.PurePosixPath(config_path).parent)
    volume_name = mounts.get(directory_path)
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    if volume_name is None:
        problem(f"--config {config_path}: nothing is mounted at {directory_path} (mount the directory, not a subPath, so reloads see updates)")
    elif volumes.get(volume_name, {}).get("configMap", {}).get("name") != configmap["metadata"]["name"]:
        problem(f"the volume at {directory_path} is not the ConfigMap {configmap['metadata']['name']}")

dockerfile = (root / "Dockerfile").read_text()
user = re.findall(r"^USER (\d+)", dockerfile, re.MULTILINE)
run_as = pod.get("securityContext", {}).get("runAsUser")
if user and run_as != int(user[-1]):
    problem(f"runAsUser is {run_as}, the image runs as {user[-1]}")

drain = server.get("timeouts", {}).get("drain", 10)
pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
grace = pod.get("terminationGracePeriodSeconds", 30)
if grace <= pre_stop + drain:
    problem(f"terminationGracePeriodSeconds {grace} does not outlast preStop {pre_stop} s plus drain {drain} s: requests would be cut off")

selector = deployment["spec"]["selector"]["matchLabels"]
labels = deployment["spec"]["template"]["metadata"]["labels"]
if any(labels.get(key) != value for key, value in service["spec"]["selector"].items()):
    problem("the Service's selector does not match the pods' labels")
if any(labels.get(key) != value for key, value in selector.items()):
    problem("the Deployment's selector does not match its pods' labels")
service_ports = {port["name"]: port for port in service["spec"]["ports"]}
for name, port in service_ports.items():
    target = port.get("targetPort")
    if target not in ports and target not in ports.values():
        problem(f"Service port {name} targets {target}, which the container does not expose")

annotations = ingress["metadata"].get("annotations", {})
for key in ("nginx.ingress.kubernetes.io/ssl-redirect", "nginx.ingress.kubernetes.io/force-ssl-redirect"):
    if annotations.get(key, "false") != "false":
        problem(f"the Ingress sets {key}: Apple's fetcher does not follow redirects on the AASA paths")
aasa_paths = {"/.well-known/apple-app-site-association", "/apple-app-site-association"}
tls_hosts = {host for entry in ingress["spec"].get("tls", []) for host in entry.get("hosts", [])}
config_hosts = {host for site in config.get("sites", []) for host in site.get("hosts", [])}
for rule in ingress["spec"]["rules"]:
    host = rule.get("host")
    paths = {path["path"] for path in rule["http"]["paths"]}
    if not aasa_paths <= paths:
        problem(f"Ingress host {host} does not route {sorted(aasa_paths - paths)}")
    if host not in tls_hosts:
        problem(f"Ingress host {host} has no TLS certificate: Apple only fetches over HTTPS")
    if config_hosts and host not in config_hosts:
        problem(f"Ingress host {host} is not a host in the ConfigMap's config")
    for path in rule["http"]["paths"]:
        backend = path["backend"]["service"]
        if backend["name"] != service["metadata"]["name"]:
            problem(f"Ingress path {path['path']} goes to service {backend['name']}, not {service['metadata']['name']}")
        if backend["port"].get("name") not in service_ports and backend["port"].get("number") not in [p["port"] for p in service_ports.values()]:
            problem(f"Ingress path {path['path']} uses a Service port that does not exist")

if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
