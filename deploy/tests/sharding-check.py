#!/usr/bin/env python3
"""scripts/shard-sites, checked on 60 generated tenant files: every file lands in exactly one shard, byte
for byte; the split is stable (a second run gives identical output) and independent of content; going
from 3 to 4 shards moves about a quarter of the files; every host is routed to the shard holding it; the
manifests pass kubernetes-validate --strict and yamllint; each shard's config validates with its tenant
files; a host in two files is refused; each shard's Pod mounts its config where `--config` points and its
tenant files where the config's `include` looks for them.

Usage: sharding-check.py DEPLOY_ROOT AASA_SERVER_BINARY
(DEPLOY_ROOT holds deploy/kubernetes/sharding: the repository, or the copy check-deploy --self-test breaks.)
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARD = os.path.join(ROOT, "scripts", "shard-sites")
deploy_root, binary = sys.argv[1], sys.argv[2]
SHARD_CONFIG = os.path.join(deploy_root, "deploy", "kubernetes", "sharding", "config.json")
SHARD_TEMPLATE = os.path.join(deploy_root, "deploy", "kubernetes", "sharding", "shard.yaml")
problems = []
work = tempfile.mkdtemp(prefix="aasa-shards-")
try:
    sites = os.path.join(work, "sites.d")
    os.makedirs(sites)
    for index in range(60):
        site = {"hosts": [f"t{index}.example.com", f"www.t{index}.example.com"], "webcredentials": {"apps": ["shop"]}}
        with open(os.path.join(sites, f"tenant-{index:03d}.json"), "w") as handle:
            json.dump([site] if index % 2 else site, handle)

    def run(shards, out):
        return subprocess.run([SHARD, "--sites", sites, "--shards", str(shards), "--out", out,
                               "--config", SHARD_CONFIG, "--template", SHARD_TEMPLATE], capture_output=True, text=True)

    def placement(out):
        result = {}
        for shard in sorted(os.listdir(out)):
            directory = os.path.join(out, shard, "sites.d")
            if os.path.isdir(directory):
                for name in os.listdir(directory):
                    if name in result:
                        problems.append(f"{name} is in two shards")
                    result[name] = shard
                    if not filecmp.cmp(os.path.join(sites, name), os.path.join(directory, name), shallow=False):
                        problems.append(f"{name} was not copied byte for byte")
        return result

    first, second, four = (os.path.join(work, name) for name in ("out-a", "out-b", "out-4"))
    for out, shards in ((first, 3), (second, 3), (four, 4)):
        result = run(shards, out)
        if result.returncode != 0:
            problems.append(f"shard-sites --shards {shards} failed: {result.stderr}")
    placed = placement(first)
    if sorted(placed) != sorted(os.listdir(sites)):
        problems.append("not every tenant file was placed exactly once")
    if len({shard for shard in placed.values()}) != 3:
        problems.append("some shard is empty: the hash does not spread files")
    for directory, _, files in os.walk(first):
        for name in files:
            relative = os.path.relpath(os.path.join(directory, name), first)
            if not filecmp.cmp(os.path.join(first, relative), os.path.join(second, relative), shallow=False):
                problems.append(f"{relative} differs between two runs: the split is not stable")
    moved = sum(1 for name, shard in placement(four).items() if placed.get(name) != shard)
    if not 5 <= moved <= 55:
        problems.append(f"going from 3 to 4 shards moved {moved} of 60 files")

    routes = {}
    for line in open(os.path.join(first, "routing.map")):
        if line.strip() and not line.startswith("#"):
            host, service = line.split()
            routes[host] = service
    for index in range(60):
        for host in (f"t{index}.example.com", f"www.t{index}.example.com"):
            expected = "aasa-server-" + placed[f"tenant-{index:03d}.json"]
            if routes.get(host) != expected:
                problems.append(f"{host} routes to {routes.get(host)}, its file is in {expected}")

    manifests = [os.path.join(first, name) for name in ("config.yaml", "ingress.yaml")]
    manifests += [os.path.join(first, shard, "manifests.yaml") for shard in sorted(set(placed.values()))]
    validate = subprocess.run(["kubernetes-validate", "--strict", "--quiet"] + manifests, capture_output=True, text=True)
    if validate.returncode != 0:
        problems.append("kubernetes-validate: " + validate.stdout + validate.stderr)
    lint = subprocess.run(["yamllint", "-d", "{extends: default, rules: {line-length: {max: 200}}}", first], capture_output=True, text=True)
    if lint.returncode != 0:
        problems.append("yamllint: " + lint.stdout)
    for shard in sorted(set(placed.values())):
        shutil.copyfile(SHARD_CONFIG, os.path.join(first, shard, "config.json"))
        result = subprocess.run([binary, "validate", "--config", os.path.join(first, shard, "config.json")], capture_output=True, text=True)
        if result.returncode != 0:
            problems.append(f"{shard} does not validate: {result.stderr}")

    # The validation above puts config.json beside sites.d/; the Pod must see the same layout.
    config = json.load(open(SHARD_CONFIG))
    for shard in sorted(set(placed.values())):
        documents = list(yaml.safe_load_all(open(os.path.join(first, shard, "manifests.yaml"))))
        pod = next(d for d in documents if d and d.get("kind") == "Deployment")["spec"]["template"]["spec"]
        container = pod["containers"][0]
        arguments = container.get("args", [])
        config_path = arguments[arguments.index("--config") + 1] if "--config" in arguments else "/etc/aasa-server/config.json"
        volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
        mounts = {mount["mountPath"].rstrip("/"): volumes.get(mount["name"], {}) for mount in container.get("volumeMounts", [])}
        if mounts.get(os.path.dirname(config_path), {}).get("configMap", {}).get("name") != "aasa-server-config":
            problems.append(f"{shard}: --config {config_path}, but the config ConfigMap is not mounted at {os.path.dirname(config_path)}")
        for pattern in config.get("include", []):
            directory = os.path.normpath(os.path.join(os.path.dirname(config_path), os.path.dirname(pattern)))
            if mounts.get(directory, {}).get("configMap", {}).get("name") != f"aasa-server-sites-{shard}":
                problems.append(f"{shard}: the config includes {pattern} (in the Pod: {directory}), "
                                f"where the shard's tenant ConfigMap aasa-server-sites-{shard} is not mounted")

    with open(os.path.join(sites, "tenant-999.json"), "w") as handle:
        json.dump({"hosts": ["t1.example.com"], "webcredentials": {"apps": ["shop"]}}, handle)
    clash = run(3, os.path.join(work, "out-clash"))
    if clash.returncode != 1 or "t1.example.com" not in clash.stderr:
        problems.append("a host in two tenant files was not refused")
finally:
    shutil.rmtree(work, ignore_errors=True)

if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
