"""One GPT-style transformer layer in PyTorch, its forward pass split into named steps.

Imported only by the measuring functions (it imports torch). Layout as in
Megatron and Korthikanti et al. (2022): tensors are ``(s, b, h)``; LayerNorm,
QKV projection, attention (written out, or PyTorch's fused kernel), output
projection, dropout, residual; LayerNorm, 4h MLP with GeLU, dropout, residual.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling
from torch import nn

DROPOUT_P = 0.1

Mark = Callable[[str], None]


def _no_mark(step: str) -> None:
    """Default: the steps are not recorded."""


class GPTLayer(nn.Module):
    """A pre-LayerNorm GPT layer of width ``hidden`` with ``heads`` attention heads."""

    scale: torch.Tensor

    def __init__(
        self, hidden: int, heads: int, *, attention: str, dropout_mask: str, dtype: torch.dtype | None = None
    ) -> None:
        """``dtype``: the parameters' (``None``: PyTorch's default); built in it, never through an FP32 copy."""
        super().__init__()
        self.heads = heads
        self.attention = attention
        self.dropout_mask = dropout_mask
        self.ln1 = nn.LayerNorm(hidden, dtype=dtype)
        self.qkv = nn.Linear(hidden, 3 * hidden, dtype=dtype)
        self.proj = nn.Linear(hidden, hidden, dtype=dtype)
        self.ln2 = nn.LayerNorm(hidden, dtype=dtype)
        self.fc1 = nn.Linear(hidden, 4 * hidden, dtype=dtype)
        self.fc2 = nn.Linear(4 * hidden, hidden, dtype=dtype)
        # 1/sqrt(d) as a buffer: a Python-float multiply would save a 0-d tensor the hooks never see
        self.register_buffer("scale", torch.tensor((hidden // heads) ** -0.5, dtype=dtype))
        self.mark: Mark = _no_mark

    def _dropout(self, x: torch.Tensor) -> torch.Tensor:
        if self.dropout_mask == "bool":
            return torch.native_dropout(x, DROPOUT_P, True)[0]  # noqa: FBT003 - aten signature
        return F.dropout(x, DROPOUT_P, training=True)

    def _attention(self, qkv: torch.Tensor) -> torch.Tensor:
        s, b, three_h = qkv.shape
        a = self.heads
        q, k, v = (t.permute(1, 2, 0, 3) for t in qkv.view(s, b, 3, a, three_h // (3 * a)).unbind(2))
        if self.attention == "fused":
            self.mark("fused attention")
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            self.mark("attention scores")
            scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
            self.mark("softmax")
            probs = torch.softmax(scores, dim=-1)
            self.mark("softmax dropout")
            probs = self._dropout(probs)
            self.mark("attention x V")
            out = torch.matmul(probs, v)
        return out.permute(2, 0, 1, 3).reshape(s, b, three_h // 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One layer: ``x`` is ``(s, b, h)``."""
        mark = self.mark
        mark("layernorm 1")
        y = self.ln1(x)
        mark("qkv projection")
        qkv = self.qkv(y)
        attended = self._attention(qkv)
        mark("output projection")
        projected = self.proj(attended)
        mark("attention dropout")
        x = x + self._dropout(projected)
        mark("layernorm 2")
        y = self.ln2(x)
        mark("mlp up-projection")
        up = self.fc1(y)
        mark("gelu")
        act = F.gelu(up)
        mark("mlp down-projection")
        down = self.fc2(act)
        mark("mlp dropout")
        return x + self._dropout(down)
