#!/usr/bin/env python3
"""deploy/kubernetes/acme (aasa-server's own ACME on a shared volume) and deploy/kubernetes/acme-postgres
(the same with no volume: storage and links in PostgreSQL) must each agree with itself and the server.

kubernetes-validate checks the schema; this checks what it cannot: the kustomization lists exactly the
manifests, the ConfigMap's config is valid (aasa-server validate) and has an acme section, acme.storage is
where the Deployment mounts a PersistentVolumeClaim that every replica can write (ReadWriteMany), the
container ports are the config's plain and TLS listeners, and the Service passes ports 80 and 443 to them
(HTTP-01 arrives on 80, TLS-ALPN-01 on 443). And what a link service on on-demand certificates needs:
an exposed admin listener has a token mounted from a Secret, the DNS hook is mounted executable from a
ConfigMap that has it, every included directory is mounted, on-demand issuance has an ask endpoint, and
the fetch records are on the shared volume. In the PostgreSQL variant instead: no volume claim at all,
no acme.storage (the database holds it), and the database's password file mounted from a Secret.

Usage: acme-consistency.py ROOT AASA_SERVER_BINARY [acme|acme-postgres]
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import yaml

root = pathlib.Path(sys.argv[1])
binary = sys.argv[2]
variant = sys.argv[3] if len(sys.argv) > 3 else "acme"
directory = root / "deploy" / "kubernetes" / variant
in_database = variant == "acme-postgres"
problems = []

documents = {}
for path in sorted(directory.glob("*.yaml")):
    for document in yaml.safe_load_all(path.read_text()):
        if document:
            documents.setdefault(document["kind"], []).append(document)


def one(kind):
    found = documents.get(kind, [])
    if len(found) != 1:
        problems.append(f"{variant}: expected exactly one {kind}, found {len(found)}")
        return None
    return found[0]


kustomization = one("Kustomization")
if kustomization is not None:
    listed = set(kustomization.get("resources", []))
    present = {path.name for path in directory.glob("*.yaml")} - {"kustomization.yaml"}
    for name in sorted(listed ^ present):
        problems.append(f"{variant}: kustomization.yaml and the directory disagree about {name}")

configmap = next((item for item in documents.get("ConfigMap", []) if "config.json" in item.get("data", {})), None)
if configmap is None:
    problems.append(f"{variant}: no ConfigMap holds config.json")
deployment, service = one("Deployment"), one("Service")
if in_database:
    claim = {}
    if documents.get("PersistentVolumeClaim"):
        problems.append(f"{variant}: a PersistentVolumeClaim in the variant that needs no volume")
else:
    claim = one("PersistentVolumeClaim")
if None in (configmap, deployment, service, claim):
    sys.exit("\n".join(problems))

text = configmap["data"]["config.json"]


def pod_files(tree):
    """The files the pod sees under /etc/aasa-server, written under `tree`: each ConfigMap's keys and a
    stand-in for each Secret's (the real ones are the operator's)."""
    spec = deployment["spec"]["template"]["spec"]
    volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
    for mount in spec["containers"][0].get("volumeMounts", []):
        if not mount["mountPath"].startswith("/etc/aasa-server"):
            continue
        target = pathlib.Path(tree + mount["mountPath"][len("/etc/aasa-server"):])
        target.mkdir(parents=True, exist_ok=True)
        volume = volumes.get(mount["name"], {})
        if "configMap" in volume:
            holder = next((item for item in documents.get("ConfigMap", []) if item["metadata"]["name"] == volume["configMap"]["name"]), {})
            for key, value in holder.get("data", {}).items():
                (target / key).write_text(value)
        elif "secret" in volume:
            for key in ("token", "endpoint", "username", "password"):
                (target / key).write_text("stand-in-secret-0123456789abcdef")


# Validated as the pod sees it: the paths under /etc/aasa-server and the state volume moved into a
# temporary tree that holds what the pod's volumes hold.
with tempfile.TemporaryDirectory() as tree:
    if deployment is not None:
        pod_files(tree)
    placed = text.replace("/etc/aasa-server/", tree + "/").replace("/var/lib/aasa-server/", tree + "/var/")
    (pathlib.Path(tree) / "config.json").write_text(placed)
    result = subprocess.run([binary, "validate", "--config", tree + "/config.json"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        problems.append(f"{variant}: the ConfigMap's config does not validate: {result.stderr.strip()}")
config = json.loads(text)
server = config.get("server", {})
acme = server.get("acme")
if not acme:
    problems.append(f"{variant}: the ConfigMap's config has no server.acme section")
    sys.exit("\n".join(problems))

pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
claims = {volume["name"]: volume["persistentVolumeClaim"]["claimName"] for volume in pod.get("volumes", []) if "persistentVolumeClaim" in volume}
mounted = {mount["mountPath"]: mount for mount in container.get("volumeMounts", [])}
if in_database:
    if acme.get("storage"):
        problems.append(f"{variant}: acme.storage names a directory; the variant keeps the storage in server.linkStore's database")
    if not (server.get("linkStore") or {}).get("postgres"):
        problems.append(f"{variant}: no server.linkStore.postgres: the ACME storage would have nowhere to go")
    if claims:
        problems.append(f"{variant}: the Deployment mounts a PersistentVolumeClaim ({', '.join(sorted(claims.values()))})")
else:
    if "ReadWriteMany" not in claim["spec"].get("accessModes", []):
        problems.append(f"{variant}: the storage claim is not ReadWriteMany; replicas would not share certificates and locks")
    mount = mounted.get(acme["storage"])
    if mount is None or mount["name"] not in claims:
        problems.append(f"{variant}: acme.storage {acme['storage']} is not where a PersistentVolumeClaim is mounted")
    else:
        if claims[mount["name"]] != claim["metadata"]["name"]:
            problems.append(f"{variant}: {acme['storage']} mounts {claims[mount['name']]}, not the claim {claim['metadata']['name']}")
        if mount.get("readOnly"):
            problems.append(f"{variant}: the storage is mounted read-only")


def listener_port(listener):
    if isinstance(listener, str):
        return int(listener.rsplit(":", 1)[1]), False
    return int(listener["port"]), bool(listener.get("tls"))


def mount_of(path):
    """The volume mounted at the longest mountPath that contains `path`, and that mount."""
    best = None
    for mount_path, entry in mounted.items():
        if path == mount_path or path.startswith(mount_path.rstrip("/") + "/"):
            if best is None or len(mount_path) > len(best["mountPath"]):
                best = entry
    if best is None:
        return None, None
    volume = next((volume for volume in pod.get("volumes", []) if volume["name"] == best["name"]), None)
    return volume, best


def configmap_named(name):
    return next((item for item in documents.get("ConfigMap", []) if item["metadata"]["name"] == name), None)


if server.get("adminExposed"):
    token = server.get("adminTokenFile")
    volume, _ = mount_of(token) if token else (None, None)
    if not token:
        problems.append(f"{variant}: the admin listener is exposed without adminTokenFile (anyone in the cluster could read /status)")
    elif volume is None or "secret" not in volume:
        problems.append(f"{variant}: adminTokenFile {token} is not in a volume mounted from a Secret")

if acme.get("dnsHook"):
    hook = acme["dnsHook"]
    volume, _ = mount_of(hook)
    name = hook.rsplit("/", 1)[1]
    if volume is None or "configMap" not in volume:
        problems.append(f"{variant}: the DNS hook {hook} is not in a volume mounted from a ConfigMap")
    else:
        if not volume["configMap"].get("defaultMode", 0o644) & 0o111:
            problems.append(f"{variant}: the DNS hook's volume {volume['name']} is not executable (defaultMode)")
        holder = configmap_named(volume["configMap"]["name"])
        if holder is None or name not in holder.get("data", {}):
            problems.append(f"{variant}: the ConfigMap {volume['configMap']['name']} has no {name}")
        elif not holder["data"][name].startswith("#!"):
            problems.append(f"{variant}: the DNS hook {name} does not start with #! (it runs without a shell)")

config_directory = "/etc/aasa-server"
for pattern in config.get("include", []):
    directory_of = (config_directory + "/" + pattern).rsplit("/", 1)[0]
    volume, entry = mount_of(directory_of + "/x")
    if volume is None or entry["mountPath"] != directory_of:
        problems.append(f"{variant}: the included {pattern} is not a mounted directory ({directory_of})")

if acme.get("onDemand") is not None and not (isinstance(acme["onDemand"], dict) and acme["onDemand"].get("ask")):
    problems.append(f"{variant}: on-demand issuance without an ask endpoint lets any name the config serves order certificates")

state = server.get("stateDirectory")
if not in_database and state and not (state == acme["storage"] or state.startswith(acme["storage"].rstrip("/") + "/")):
    problems.append(f"{variant}: stateDirectory {state} is not on the shared volume; each replica would keep its own fetch records")
password = (server.get("linkStore") or {}).get("passwordFile")
if password:
    volume, _ = mount_of(password)
    if volume is None or "secret" not in volume:
        problems.append(f"{variant}: linkStore.passwordFile {password} is not in a volume mounted from a Secret")

listeners = [listener_port(listener) for listener in server.get("listen", [])]
ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
for name, tls in (("http", False), ("https", True)):
    if (ports.get(name), tls) not in listeners:
        problems.append(f"{variant}: containerPort {name} ({ports.get(name)}) is not a {'TLS' if tls else 'plain'} listener of the config")
published = {port["port"]: port["targetPort"] for port in service["spec"].get("ports", [])}
if published.get(80) != "http" or published.get(443) != "https":
    problems.append(f"{variant}: the Service must pass port 80 to http (HTTP-01) and 443 to https (TLS-ALPN-01)")
if deployment["spec"]["selector"]["matchLabels"] != service["spec"]["selector"]:
    problems.append(f"{variant}: the Service selects other pods than the Deployment runs")

if problems:
    sys.exit("\n".join(problems))
print(f"{variant} manifests agree")
