"""The DNN models of paper 001's Table I, with **estimated** stage profiles and parallel configurations.

The paper gives each model's parameter count and mini-batch size (kept exactly here: ``params_m``,
``batch_size``) but not its per-layer profile nor the planner's configurations. Everything else in this
module is an ESTIMATE made by one reproducible rule (``docs/algorithms/pipeline-model.md``):

* a model is a chain of *blocks* (groups of layers) with parameters (M), forward multiply-accumulates per
  sample (GMAC) and output activation elements per sample (M), computed from the published architectures
  (VGG19, ResNet152 and Inception-V3 at 224/224/299 px; BERT-large at sequence 384 (SQuAD 2.0), XLNet-large,
  T5 and the GPTs at sequence 512; T5 and the GPTs as the paper's 3-layer versions);
* a configuration cuts the chain into S contiguous stages and gives stage s k_s replicas; each iteration's
  mini-batch of B samples is split evenly over a stage's replicas;
* p^f_s = 2 * GMAC_s * (B / k_s) / EFFECTIVE_TFLOPS (ms: GFLOP / (TFLOP/s)), p^b_s = 2 p^f_s;
* d^out_s = BYTES * (output elements of the stage's last block) * B / k_s (MB), so that
  k_s d^out_s = k_{s+1} d^in_{s+1} holds by construction;
* h_s = BYTES * (parameters of the stage) (MB: fp32 gradients, the all-reduce payload);
* a single-GPU configuration exists iff the (profiled) model's training state, 16 bytes per parameter
  (fp32 weights, gradients, two Adam moments), fits one 32 GB V100.

```pycon
>>> job = catalogue_job("VGG19:1gpu")
>>> job.gpus, job.kind, round(job.stages[0].params_mb)
(1, 'single-gpu', 575)
>>> sorted(CATALOGUE) == sorted(MODEL_NAMES)
True

```
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InstanceError
from .problems.pipeline import PipelineJob, pipeline_job

EFFECTIVE_TFLOPS = 14.0      # ESTIMATE: sustained training throughput of one V100 (FP32 peak 15.7 TFLOP/s)
BYTES = 4.0                  # fp32 activations and gradients
GPU_MEMORY_GB = 32.0         # V100 32 GB: the single-GPU rule
TRAINING_BYTES_PER_PARAM = 16.0
MODEL_NAMES = ("VGG19", "ResNet152", "Inception-V3", "BERT-large", "XLNet-large", "T5", "GPT-6.7B", "GPT-13B",
               "GPT-175B")


@dataclass(frozen=True)
class Block:
    """A group of consecutive layers: parameters (M), forward GMAC per sample, output elements per sample (M)."""

    name: str
    params_m: float
    gmacs: float
    out_melems: float


@dataclass(frozen=True)
class Config:
    """A parallel configuration: stage s holds blocks[bounds[s-1]:bounds[s]] on ``replicas[s]`` GPUs."""

    name: str
    bounds: tuple[int, ...]
    replicas: tuple[int, ...]
    allreduce: str = "ring"

    @property
    def gpus(self) -> int:
        return sum(self.replicas)


@dataclass(frozen=True)
class ModelSpec:
    """One Table I model: the paper's parameter count and mini-batch, our block profile and configurations."""

    name: str
    params_m: float          # the paper's Table I
    batch_size: int          # the paper's Table I
    blocks: tuple[Block, ...]
    configs: tuple[Config, ...]
    note: str = ""

    @property
    def profiled_params_m(self) -> float:
        """Parameters of the profiled network (the 3-layer versions for T5 and the GPTs)."""
        return sum(b.params_m for b in self.blocks)

    @property
    def single_gpu(self) -> bool:
        return self.profiled_params_m * 1e6 * TRAINING_BYTES_PER_PARAM <= GPU_MEMORY_GB * 1e9

    def config(self, name: str) -> Config:
        for c in self.configs:
            if c.name == name:
                return c
        raise InstanceError(f"model {self.name} has no configuration {name!r} (known: "
                            f"{', '.join(c.name for c in self.configs)})", field="config")

    def job(self, config: str, job_id: str | None = None) -> PipelineJob:
        """The pipeline job of this model under configuration ``config`` (estimated profile)."""
        c = self.config(config)
        B = self.batch_size
        fwd, bwd, dout, params = [], [], [], []
        lo = 0
        for s, hi in enumerate(c.bounds):
            blocks = self.blocks[lo:hi]
            k = c.replicas[s]
            f = 2.0 * sum(b.gmacs for b in blocks) * (B / k) / EFFECTIVE_TFLOPS
            fwd.append(f)
            bwd.append(2.0 * f)
            last = s == len(c.bounds) - 1
            dout.append(0.0 if last else BYTES * blocks[-1].out_melems * B / k)
            params.append(BYTES * sum(b.params_m for b in blocks))
            lo = hi
        return pipeline_job(job_id or f"{self.name}:{c.name}", replicas=list(c.replicas), forward_ms=fwd,
                            backward_ms=bwd, d_out_mb=dout, params_mb=params, allreduce=c.allreduce,
                            model=self.name, config=c.name)


def _chain(n_blocks: int, *configs: tuple) -> tuple[Config, ...]:
    out = []
    for cfg in configs:
        name, bounds, replicas, *rest = cfg
        assert bounds[-1] == n_blocks and len(bounds) == len(replicas), name
        out.append(Config(name, tuple(bounds), tuple(replicas), *rest))
    return tuple(out)


def _transformer_layer(d: int, seq: int, params_m: float) -> Block:
    # MACs per sample: every token through the layer's weights, plus attention scores and context (2 seq^2 d)
    return Block("layer", params_m, (seq * params_m * 1e6 + 2.0 * seq * seq * d) / 1e9, seq * d / 1e6)


def _build() -> dict[str, ModelSpec]:
    cat: dict[str, ModelSpec] = {}
    # VGG19 at 224x224: conv blocks 1-5 (each ends in a max-pool) and the three FC layers
    vgg = (Block("conv1", 0.0387, 1.936, 64 * 112 * 112 / 1e6), Block("conv2", 0.2212, 2.775, 128 * 56 * 56 / 1e6),
           Block("conv3", 2.0657, 6.474, 256 * 28 * 28 / 1e6), Block("conv4", 8.2604, 6.474, 512 * 14 * 14 / 1e6),
           Block("conv5", 9.4419, 1.850, 512 * 7 * 7 / 1e6), Block("fc", 123.6424, 0.1236, 1000 / 1e6))
    cat["VGG19"] = ModelSpec("VGG19", 144, 32, vgg, _chain(
        6, ("1gpu", (6,), (1,)), ("dp4", (6,), (4,)), ("pp4", (2, 3, 4, 6), (1, 1, 1, 1)),
        ("hybrid16", (2, 3, 4, 6), (4, 4, 4, 4)), ("hybrid8", (4, 6), (6, 2))))
    # ResNet152 at 224x224: stem, the four residual stages, the classifier
    res = (Block("stem", 0.0095, 0.118, 64 * 56 * 56 / 1e6), Block("layer1", 0.2159, 0.680, 256 * 56 * 56 / 1e6),
           Block("layer2", 2.2183, 1.750, 512 * 28 * 28 / 1e6), Block("layer3", 40.6340, 7.820, 1024 * 14 * 14 / 1e6),
           Block("layer4", 14.9645, 0.740, 2048 * 7 * 7 / 1e6), Block("fc", 2.049, 0.002, 1000 / 1e6))
    cat["ResNet152"] = ModelSpec("ResNet152", 60, 4, res, _chain(
        6, ("1gpu", (6,), (1,)), ("dp8", (6,), (8,)), ("pp4x2", (3, 4, 5, 6), (2, 2, 2, 2))))
    # Inception-V3 at 299x299: stem, Mixed_5 (35x35), Mixed_6 (17x17), Mixed_7 (8x8), classifier
    inc = (Block("stem", 0.319, 1.700, 192 * 35 * 35 / 1e6), Block("mixed5", 0.806, 1.000, 288 * 35 * 35 / 1e6),
           Block("mixed6", 9.076, 2.300, 768 * 17 * 17 / 1e6), Block("mixed7", 11.749, 0.750, 2048 * 8 * 8 / 1e6),
           Block("fc", 2.049, 0.002, 1000 / 1e6))
    cat["Inception-V3"] = ModelSpec("Inception-V3", 24, 32, inc, _chain(
        5, ("1gpu", (5,), (1,)), ("dp4", (5,), (4,)), ("pp2x2", (2, 5), (2, 2))))
    # BERT-large (SQuAD 2.0, sequence 384): embeddings, 24 layers of 12.6M parameters
    seq = 384
    bert = (Block("embed", 31.8, 0.0, seq * 1024 / 1e6),) + tuple(_transformer_layer(1024, seq, 12.6)
                                                                  for _ in range(24))
    cat["BERT-large"] = ModelSpec("BERT-large", 340, 4, bert, _chain(
        25, ("1gpu", (25,), (1,)), ("dp4", (25,), (4,)), ("pp4x2", (7, 13, 19, 25), (2, 2, 2, 2)),
        ("pp4x2-tree", (7, 13, 19, 25), (2, 2, 2, 2), "tree")))
    # XLNet-large (sequence 512): 24 layers, per-layer parameters scaled to the paper's 550M total
    seq = 512
    xl = (Block("embed", 32.8, 0.0, seq * 1024 / 1e6),) + tuple(_transformer_layer(1024, seq, (550 - 32.8) / 24)
                                                                for _ in range(24))
    cat["XLNet-large"] = ModelSpec("XLNet-large", 550, 4, xl, _chain(
        25, ("1gpu", (25,), (1,)), ("pp4x2", (7, 13, 19, 25), (2, 2, 2, 2)), ("dp4-tree", (25,), (4,), "tree")))
    # T5 (11B: 48 layers of d_model 1024 with d_ff 65536, 128 heads of 128): the 3-layer version
    t5 = tuple(_transformer_layer(16384, 512, 11000 / 48) for _ in range(3))
    cat["T5"] = ModelSpec("T5", 11000, 8, t5, _chain(
        3, ("1gpu", (3,), (1,)), ("pp3", (1, 2, 3), (1, 1, 1)), ("pp3x2", (1, 2, 3), (2, 2, 2))),
        note="3-layer version (paper V-A), 229M parameters per layer")
    # GPTs: 3-layer versions, 12 d^2 parameters per layer, sequence 512
    for name, d, batch in (("GPT-6.7B", 4096, 32), ("GPT-13B", 5120, 32), ("GPT-175B", 12288, 16)):
        layers = tuple(_transformer_layer(d, 512, 12 * d * d / 1e6) for _ in range(3))
        cfgs: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = [
            ("pp3", (1, 2, 3), (1, 1, 1)), ("pp3x2", (1, 2, 3), (2, 2, 2)), ("pp3x4", (1, 2, 3), (4, 4, 4))]
        spec = ModelSpec(name, {"GPT-6.7B": 6700, "GPT-13B": 13000, "GPT-175B": 175000}[name], batch, layers,
                         (), note="3-layer version (paper V-A)")
        if spec.single_gpu:
            cfgs.insert(0, ("1gpu", (3,), (1,)))
        cat[name] = ModelSpec(spec.name, spec.params_m, batch, layers, _chain(3, *cfgs), spec.note)
    return cat


CATALOGUE: dict[str, ModelSpec] = _build()


def catalogue_job(spec: str, job_id: str | None = None) -> PipelineJob:
    """``"NAME:CONFIG"`` (or ``"NAME"`` for its first configuration) -> the estimated
    [`PipelineJob`][optsched.problems.pipeline.PipelineJob]."""
    name, _, cfg = spec.partition(":")
    lookup = {k.lower(): v for k, v in CATALOGUE.items()}
    if name.lower() not in lookup:
        raise InstanceError(f"unknown model {name!r} (known: {', '.join(CATALOGUE)})", field="model")
    m = lookup[name.lower()]
    return m.job(cfg or m.configs[0].name, job_id)


def single_gpu_models() -> list[str]:
    """Models with a single-GPU configuration (A-SRPT assigns these to single-GPU trace jobs)."""
    return [n for n, m in CATALOGUE.items() if any(c.gpus == 1 for c in m.configs)]
