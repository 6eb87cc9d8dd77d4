"""The GEMMs of public open LLMs' decoder layers: what plans/llm.toml (BF16, FP16) and plans/llm_fp8.toml run and `farm report --headline` sums per model.

A linear layer y = x W^T on a batch of M tokens is an M x N x K product: K its input features, N its output features.
Per layer, a model's projections and MLP give four shapes (q_proj and o_proj share hidden x hidden, k_proj and v_proj
share hidden -> KV heads x head_dim, gate_proj and up_proj share hidden -> intermediate, down_proj is intermediate ->
hidden), each at every token count in TOKENS: M = 1 and 16 are decoding, 128 to 8192 prefill. Configuration values
are the models' config.json on the Hugging Face Hub (URLs below); head_dim is hidden_size / num_attention_heads
(128 in all three). Mistral-7B-v0.1 (hidden 4096, intermediate 14336, 32 heads, 8 KV heads) has Llama-3-8B's shapes
exactly, so it adds no cell.
"""

from __future__ import annotations

from dataclasses import dataclass

TOKENS = (1, 16, 128, 1024, 4096, 8192)


@dataclass(frozen=True)
class LlmModel:
    name: str
    hidden: int  # hidden_size
    intermediate: int  # intermediate_size
    heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads
    source: str  # where the values are published

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def layers(self) -> dict[str, tuple[int, int]]:
        """(N, K) of each distinct linear layer, named by the layers that share it."""
        kv = self.kv_heads * self.head_dim
        return {
            "q_proj, o_proj": (self.hidden, self.hidden),
            "k_proj, v_proj": (kv, self.hidden),
            "gate_proj, up_proj": (self.intermediate, self.hidden),
            "down_proj": (self.hidden, self.intermediate),
        }

    def shapes(self) -> list[tuple[int, int, int]]:
        """Every (M, N, K) of the model: each layer at each token count."""
        return [(m, n, k) for m in TOKENS for n, k in self.layers().values()]


MODELS = (
    LlmModel(
        "Llama-3-8B", 4096, 14336, 32, 8, "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"
    ),
    LlmModel("Qwen2.5-7B", 3584, 18944, 28, 4, "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json"),
    LlmModel(
        "Llama-3.1-70B", 8192, 28672, 64, 8, "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json"
    ),
)


def plan_shapes() -> list[tuple[int, int, int]]:
    """Every model's shapes, each once, in model order."""
    return list(dict.fromkeys(s for model in MODELS for s in model.shapes()))
