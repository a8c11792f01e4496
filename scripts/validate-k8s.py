#!/usr/bin/env python3
"""Validates the Kubernetes manifests gpuctl renders (issue 14, engine = "k3s").

Usage: validate-k8s.py DIR
Every *.yaml in DIR (each a stream of documents, as crates/provision/tests/k3s.rs writes them):
- every document through kubernetes-validate (strict: unknown fields fail) against each Kubernetes
  version in KUBERNETES_VERSIONS; a custom resource it has no schema for (the TrainJob) is not
  skipped silently: it must be a TrainJob, checked below;
- every TrainJob loaded into Kubeflow Trainer's published API models (kubeflow-trainer-api): it
  must validate (required fields, types), and dumping the model back must give the document again,
  so a field the models do not know (which their from_dict would drop) fails.
Prints one line per document and a closing `N passed, N failed` line; exits 1 on any failure.
Run with the ignored virtualenv .venv-k8s (scripts/k8s-validators installs the pinned versions).
"""

import pathlib
import sys

import kubernetes_validate
import yaml
from kubeflow_trainer_api.models.trainer_v1alpha1_train_job import TrainerV1alpha1TrainJob

# Kubeflow Trainer needs Kubernetes >= 1.31 (its installation guide); 1.33 is the k3s stable line
# when this was written. Both are checked.
KUBERNETES_VERSIONS = ["1.31.0", "1.33.0"]
TRAINJOB_API = "trainer.kubeflow.org/v1alpha1"


def check_trainjob(doc):
    if doc.get("apiVersion") != TRAINJOB_API or doc.get("kind") != "TrainJob":
        return f"not a {TRAINJOB_API} TrainJob: {doc.get('apiVersion')}/{doc.get('kind')}"
    try:
        job = TrainerV1alpha1TrainJob.from_dict(doc)
    except Exception as e:  # pydantic's ValidationError, or a type error in a nested from_dict
        return f"kubeflow-trainer-api refuses it: {e}"
    if job is None or job.spec is None or job.spec.runtime_ref is None:
        return "no spec.runtimeRef"
    back = job.to_dict()
    if back != doc:
        return f"fields the Trainer API models do not know (dropped on load): {', '.join(differences(doc, back))}"
    return None


def differences(sent, kept, path="."):
    """Where `kept` (the models' dump) differs from `sent`, as paths."""
    if isinstance(sent, dict) and isinstance(kept, dict):
        out = []
        for k in sent:
            p = f"{path.rstrip('.')}.{k}"
            out += [p] if k not in kept else differences(sent[k], kept[k], p)
        return out + [f"{path.rstrip('.')}.{k} (added)" for k in kept if k not in sent]
    if isinstance(sent, list) and isinstance(kept, list) and len(sent) == len(kept):
        return [d for i, (a, b) in enumerate(zip(sent, kept)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if sent == kept else [path]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    files = sorted(pathlib.Path(sys.argv[1]).glob("*.yaml"))
    if not files:
        print(f"no *.yaml in {sys.argv[1]}", file=sys.stderr)
        return 1
    passed = failed = 0
    for f in files:
        for i, doc in enumerate(yaml.safe_load_all(f.read_text())):
            what = f"{f.name}#{i} {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
            problems = []
            if doc.get("kind") == "TrainJob":
                p = check_trainjob(doc)
                if p:
                    problems.append(p)
                else:
                    # The schema-less kind must still be refused by kubernetes-validate as exactly
                    # that: a custom resource, not a malformed core object.
                    for v in KUBERNETES_VERSIONS:
                        try:
                            kubernetes_validate.validate(doc, v, strict=True)
                            problems.append(f"kubernetes-validate {v} knew a TrainJob schema: unexpected")
                        except kubernetes_validate.SchemaNotFoundError:
                            pass
            else:
                for v in KUBERNETES_VERSIONS:
                    try:
                        kubernetes_validate.validate(doc, v, strict=True)
                    except kubernetes_validate.ValidationError as e:
                        problems.append(f"kubernetes-validate {v}: {e.message} at {'.'.join(map(str, e.path))}")
                    except kubernetes_validate.SchemaNotFoundError as e:
                        problems.append(f"kubernetes-validate {v}: no schema ({e})")
            if problems:
                failed += 1
                print(f"FAIL {what}")
                for p in problems:
                    print(f"  {p}")
            else:
                passed += 1
                print(f"ok   {what}")
    print(f"k8s manifests: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
