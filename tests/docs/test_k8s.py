"""The Kubernetes manifests in docs/k8s/ parse, and say what docs/CLUSTER.md says they do: heads as a
Deployment probed on /api/v1/health, a Service for them, config.toml in a ConfigMap that the service
reads, the store URL and the secret key file from a Secret, a RayCluster of the Ray the image holds,
and a `studio serve` command line the service's own parser takes."""
from __future__ import annotations

import tomllib
from pathlib import Path

import ray
import yaml

from api.cli import build_parser
from orchestrator.plans import load_plans

K8S = Path(__file__).resolve().parents[2] / "docs" / "k8s"


def _documents() -> dict[tuple[str, str], dict]:
    found = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert {"apiVersion", "kind", "metadata"} <= doc.keys(), (path.name, doc)
            found[(doc["kind"], doc["metadata"]["name"])] = doc
    return found


def _container(deployment: dict, name: str) -> dict:
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def test_the_manifests_parse_and_name_what_the_docs_say():
    docs = _documents()
    heads = docs[("Deployment", "studio-heads")]
    assert heads["spec"]["replicas"] >= 2
    assert heads["spec"]["selector"]["matchLabels"].items() <= heads["spec"]["template"]["metadata"]["labels"].items()
    studio = _container(heads, "studio")
    assert studio["readinessProbe"]["httpGet"]["path"] == "/api/v1/health"
    service = docs[("Service", "studio")]
    assert service["spec"]["selector"].items() <= heads["spec"]["template"]["metadata"]["labels"].items()
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= {p["name"] for p in studio["ports"]}

    args = build_parser().parse_args(studio["command"][1:])  # `studio serve ...` as the CLI reads it
    assert args.host == "0.0.0.0" and args.no_bootstrap and args.forwarded_allow_ips  # clients' own addresses

    env = {e["name"]: e for e in studio["env"]}
    secret = docs[("Secret", "studio")]["stringData"]
    assert env["STUDIO_STORE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "studio", "key": "store_url"}
    assert secret["store_url"].startswith("postgresql://")
    mounts = {m["name"]: m for m in studio["volumeMounts"]}
    volumes = {v["name"]: v for v in heads["spec"]["template"]["spec"]["volumes"]}
    key_file = Path(env["STUDIO_SECRET_KEY_FILE"]["value"])
    (item,) = volumes[next(n for n, m in mounts.items() if m["mountPath"] == str(key_file.parent))]["secret"]["items"]
    assert item["path"] == key_file.name and item["key"] in secret

    config_mount = next(m for m in studio["volumeMounts"] if m["mountPath"].endswith("/config.toml"))
    config_map = docs[("ConfigMap", volumes[config_mount["name"]]["configMap"]["name"])]
    config = tomllib.loads(config_map["data"][config_mount["subPath"]])
    assert load_plans(config)["lab"]["requests_per_minute"] == config["plans"]["lab"]["requests_per_minute"]
    assert Path(config_mount["mountPath"]).parent == Path(build_parser().parse_args(studio["command"][1:]).data_dir)

    cluster = next(d for (kind, _), d in docs.items() if kind == "RayCluster")
    assert cluster["spec"]["rayVersion"] == ray.__version__  # drivers and cluster must run one Ray
    assert cluster["spec"]["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    ray_address = env["RAY_ADDRESS"]["value"]
    assert ray_address.startswith(f"{cluster['metadata']['name']}-head-svc:")  # KubeRay's name for the GCS
    token = cluster["spec"]["authOptions"]["secretName"]
    assert env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == token and ("Secret", token) in docs
    assert ray_address in " ".join(_container(heads, "ray-node")["args"])  # the pod's Ray node joins the same GCS
