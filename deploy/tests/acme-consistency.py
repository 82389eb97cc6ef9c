#!/usr/bin/env python3
"""deploy/kubernetes/acme (aasa-server's own ACME on a shared volume) must agree with itself and the server.

kubernetes-validate checks the schema; this checks what it cannot: the kustomization lists exactly the
manifests, the ConfigMap's config is valid (aasa-server validate) and has an acme section, acme.storage is
where the Deployment mounts a PersistentVolumeClaim that every replica can write (ReadWriteMany), the
container ports are the config's plain and TLS listeners, and the Service passes ports 80 and 443 to them
(HTTP-01 arrives on 80, TLS-ALPN-01 on 443).

Usage: acme-consistency.py ROOT AASA_SERVER_BINARY
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import yaml

root = pathlib.Path(sys.argv[1])
binary = sys.argv[2]
directory = root / "deploy" / "kubernetes" / "acme"
problems = []

documents = {}
for path in sorted(directory.glob("*.yaml")):
    for document in yaml.safe_load_all(path.read_text()):
        if document:
            documents.setdefault(document["kind"], []).append(document)


def one(kind):
    found = documents.get(kind, [])
    if len(found) != 1:
        problems.append(f"acme: expected exactly one {kind}, found {len(found)}")
        return None
    return found[0]


kustomization = one("Kustomization")
if kustomization is not None:
    listed = set(kustomization.get("resources", []))
    present = {path.name for path in directory.glob("*.yaml")} - {"kustomization.yaml"}
    for name in sorted(listed ^ present):
        problems.append(f"acme: kustomization.yaml and the directory disagree about {name}")

configmap, deployment, service, claim = one("ConfigMap"), one("Deployment"), one("Service"), one("PersistentVolumeClaim")
if None in (configmap, deployment, service, claim):
    sys.exit("\n".join(problems))

text = configmap["data"]["config.json"]
with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
    handle.write(text)
    handle.flush()
    result = subprocess.run([binary, "validate", "--config", handle.name], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        problems.append(f"acme: the ConfigMap's config does not validate: {result.stderr.strip()}")
config = json.loads(text)
server = config.get("server", {})
acme = server.get("acme")
if not acme:
    problems.append("acme: the ConfigMap's config has no server.acme section")
    sys.exit("\n".join(problems))

if "ReadWriteMany" not in claim["spec"].get("accessModes", []):
    problems.append("acme: the storage claim is not ReadWriteMany; replicas would not share certificates and locks")

pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
claims = {volume["name"]: volume["persistentVolumeClaim"]["claimName"] for volume in pod.get("volumes", []) if "persistentVolumeClaim" in volume}
mounted = {mount["mountPath"]: mount for mount in container.get("volumeMounts", [])}
mount = mounted.get(acme["storage"])
if mount is None or mount["name"] not in claims:
    problems.append(f"acme: acme.storage {acme['storage']} is not where a PersistentVolumeClaim is mounted")
else:
    if claims[mount["name"]] != claim["metadata"]["name"]:
        problems.append(f"acme: {acme['storage']} mounts {claims[mount['name']]}, not the claim {claim['metadata']['name']}")
    if mount.get("readOnly"):
        problems.append("acme: the storage is mounted read-only")


def listener_port(listener):
    if isinstance(listener, str):
        return int(listener.rsplit(":", 1)[1]), False
    return int(listener["port"]), bool(listener.get("tls"))


listeners = [listener_port(listener) for listener in server.get("listen", [])]
ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
for name, tls in (("http", False), ("https", True)):
    if (ports.get(name), tls) not in listeners:
        problems.append(f"acme: containerPort {name} ({ports.get(name)}) is not a {'TLS' if tls else 'plain'} listener of the config")
published = {port["port"]: port["targetPort"] for port in service["spec"].get("ports", [])}
if published.get(80) != "http" or published.get(443) != "https":
    problems.append("acme: the Service must pass port 80 to http (HTTP-01) and 443 to https (TLS-ALPN-01)")
if deployment["spec"]["selector"]["matchLabels"] != service["spec"]["selector"]:
    problems.append("acme: the Service selects other pods than the Deployment runs")

if problems:
    sys.exit("\n".join(problems))
print("acme manifests agree")
