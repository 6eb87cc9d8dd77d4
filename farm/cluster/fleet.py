"""The GPUs of the Ray cluster: find them, start one pinned worker on each, keep the models asked for."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import ray
from ray.actor import ActorHandle
from ray.exceptions import RayError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from farm.cluster.worker import GPU_MODEL_LABEL, GpuWorker
from farm.measure import measurers
from farm.measure.cell_timer import MeasureOptions

log = logging.getLogger("farm.sweep")


class SweepError(RuntimeError):
    """The sweep cannot start as asked: the message says why and what the cluster has."""


@dataclass(frozen=True)
class GpuNode:
    """An alive Ray node with GPUs."""

    node_id: str
    host: str
    gpus: int
    model_label: str | None  # its farm.gpu-model label, if it was started with one


@dataclass(frozen=True)
class Worker:
    """A started GpuWorker and the GPU it reported."""

    actor: ActorHandle
    node: GpuNode
    device: dict

    @property
    def model(self) -> str:
        return self.device["gpu_model"]

    @property
    def uuid(self) -> str:
        return self.device["gpu_uuid"]

    @property
    def key(self) -> str:
        """This worker among the sweep's: its GPU on its node (two Ray nodes may share a GPU, as in a test of node loss
        on a one-GPU host)."""
        return f"{self.uuid}@{self.node.node_id}"

    @property
    def name(self) -> str:
        """For logs: model, host, the UUID's tail (CUDA ordinals are all 0 inside workers) and the node's id's head."""
        return f"{self.model}@{self.node.host}[{self.uuid[-8:]}, node {self.node.node_id[:6]}]"


def gpu_nodes() -> list[GpuNode]:
    """Alive nodes that declare GPU resources, by host."""
    nodes = [
        GpuNode(
            n["NodeID"],
            n.get("NodeManagerHostname") or n["NodeManagerAddress"],
            int(n["Resources"]["GPU"]),
            (n.get("Labels") or {}).get(GPU_MODEL_LABEL),
        )
        for n in ray.nodes()
        if n["Alive"] and n["Resources"].get("GPU", 0) >= 1
    ]
    return sorted(nodes, key=lambda n: (n.host, n.node_id))


def _canonical(model: str) -> str:
    # "H200", "h200" and NVML's "NVIDIA-H200" name one model.
    return model.lower().removeprefix("nvidia-")


def model_wanted(model: str, wanted: tuple[str, ...]) -> bool:
    """Whether `model` is one of `wanted` (all when empty); case and an "NVIDIA-" prefix ignored."""
    return not wanted or _canonical(model) in {_canonical(w) for w in wanted}


@dataclass(frozen=True)
class WorkerSpec:
    """What every worker builds: the measurer registered under `measurer` (farm/measure/measurers.py), with the
    plan's validated options (a frozen dataclass: Ray pickles it in a few hundred bytes), compiling `prewarm`'s
    stages while its first cells run."""

    measurer: str
    options: MeasureOptions = field(default_factory=MeasureOptions)
    prewarm: tuple[str, ...] = ()
    arm_b: str | None = None  # a paired sweep's second arm (GpuWorker): "" the same code, else a kernels tree


def _spawn(node: GpuNode, measurer_path: str, spec: WorkerSpec) -> ActorHandle:
    # No runtime env of its own (the job's carries the commit: farm/sweep.py connect): Ray can then hand it a
    # worker process it already started, rather than start one for it.
    return GpuWorker.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False)).remote(
        measurer_path, spec.options, spec.prewarm, spec.arm_b
    )


def _log_startup(workers: list[Worker], asked: float) -> None:
    """One line per worker: how long it took to be ready, and each step of that from its process's start."""
    took = time.monotonic() - asked
    for w, steps in zip(workers, ray.get([w.actor.startup.remote() for w in workers])):
        log.info(
            "%s ready %.1f s after it was asked for: %s",
            w.name,
            took,
            ", ".join(f"{step} {seconds:.2f} s" for step, seconds in steps.items()),
        )


def start_workers(
    spec: WorkerSpec, wanted: tuple[str, ...], start_timeout_s: float, none_here: bool = False
) -> list[Worker]:
    """One worker per GPU of the wanted models, each ready (its device_info answered), building what `spec` says.

    Nodes labelled with an unwanted model get no worker; unlabelled nodes get one so that
    NVML can name their model, and it is stopped if unwanted. Raises SweepError, with no
    worker left running, when the cluster has no GPU or lacks a wanted model. `none_here`: the
    cluster is a local Ray of the sweep's own, which the message then does not send the user to.
    """
    measurer_path = measurers.path_of(spec.measurer)  # the workers import a registered path, never a plan's text
    nodes = gpu_nodes()
    if not nodes and none_here:
        raise SweepError(
            "no GPU on this machine: Ray found none (`nvidia-smi` should list one; CUDA_VISIBLE_DEVICES "
            "must not hide it), or name a cluster that has GPUs with --address"
        )
    if not nodes:
        alive = sum(n["Alive"] for n in ray.nodes())
        raise SweepError(f"the Ray cluster has no GPU: none of its {alive} alive node(s) declares a GPU resource")
    pending: dict[ray.ObjectRef, tuple[ActorHandle, GpuNode]] = {}
    for node in nodes:
        if node.model_label is None or model_wanted(node.model_label, wanted):
            for _ in range(node.gpus):
                actor = _spawn(node, measurer_path, spec)
                pending[actor.device_info.remote()] = (actor, node)
    asked = time.monotonic()
    deadline = asked + start_timeout_s
    workers: list[Worker] = []
    for attempt in (1, 2):  # a worker whose start failed gets one more try: a node's first runtime env can race
        ready, late = ray.wait(list(pending), num_returns=len(pending), timeout=max(deadline - time.monotonic(), 0))
        retries: dict[ray.ObjectRef, tuple[ActorHandle, GpuNode]] = {}
        for ref in ready:
            actor, node = pending[ref]
            try:
                workers.append(Worker(actor, node, ray.get(ref)))
            except RayError as exc:
                ray.kill(actor)
                if attempt == 1:
                    log.warning(
                        "worker on %s (node %s) failed to start, trying once more: %s", node.host, node.node_id[:8], exc
                    )
                    again = _spawn(node, measurer_path, spec)
                    retries[again.device_info.remote()] = (again, node)
                else:
                    log.error(
                        "worker on %s (node %s) failed to start twice, its GPU is left out: %s",
                        node.host,
                        node.node_id[:8],
                        exc,
                    )
        for ref in late:
            actor, node = pending[ref]
            log.error(
                "worker on %s (node %s) not ready after %.0f s (GPU busy?), its GPU is left out",
                node.host,
                node.node_id[:8],
                start_timeout_s,
            )
            ray.kill(actor)
        pending = retries
        if not pending:
            break
    missing = [m for m in wanted if not any(model_wanted(w.model, (m,)) for w in workers)]
    if missing or not workers:
        for w in workers:
            ray.kill(w.actor)
        present = sorted({w.model for w in workers} | {n.model_label for n in nodes if n.model_label})
        what = f"no ready GPU of model {', '.join(missing)}" if missing else "no GPU worker that started"
        raise SweepError(f"the cluster has {what}; models present: {', '.join(present) or 'none'}")
    for w in workers:
        if not model_wanted(w.model, wanted):
            ray.kill(w.actor)
    kept = sorted((w for w in workers if model_wanted(w.model, wanted)), key=lambda w: (w.model, w.node.host, w.uuid))
    _log_startup(kept, asked)
    return kept


class Recruiter:
    """GPUs that join the cluster after the sweep started (an autoscaler adding nodes): look() starts a worker on
    each GPU of a node not seen before whose label does not rule it out; answered() gives it once ready."""

    def __init__(self, spec: WorkerSpec, wanted: tuple[str, ...]) -> None:
        self._measurer_path = measurers.path_of(spec.measurer)
        self._spec = spec
        self._wanted = wanted
        self._seen = {n.node_id for n in gpu_nodes()}  # the nodes start_workers had (used or not)
        self.pending: dict[ray.ObjectRef, tuple[ActorHandle, GpuNode]] = {}

    def look(self) -> None:
        for node in gpu_nodes():
            if node.node_id in self._seen:
                continue
            self._seen.add(node.node_id)
            if node.model_label is None or model_wanted(node.model_label, self._wanted):
                log.info(
                    "a node with %d GPU(s) joined: %s (node %s); starting its workers",
                    node.gpus,
                    node.host,
                    node.node_id[:8],
                )
                for _ in range(node.gpus):
                    actor = _spawn(node, self._measurer_path, self._spec)
                    self.pending[actor.device_info.remote()] = (actor, node)

    def answered(self, ref: ray.ObjectRef) -> Worker | None:
        """The worker whose device_info `ref` is, ready and of a wanted model; None (stopped) otherwise."""
        actor, node = self.pending.pop(ref)
        try:
            worker = Worker(actor, node, ray.get(ref))
        except RayError as exc:
            log.error(
                "worker on %s (node %s), which joined mid-sweep, failed to start: %s", node.host, node.node_id[:8], exc
            )
            ray.kill(actor)
            return None
        if not model_wanted(worker.model, self._wanted):
            ray.kill(actor)
            return None
        return worker

    def stop(self) -> None:
        """Stop the workers still starting."""
        for actor, _ in self.pending.values():
            ray.kill(actor)
        self.pending.clear()
