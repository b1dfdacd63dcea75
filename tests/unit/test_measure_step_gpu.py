"""The GPU step script's command line: its arguments are checked as measure_step checks them, before torch."""

from __future__ import annotations

import pytest

from mlsysim_nb.measure.step_gpu import main, parser


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--dtype", "float16"], "dtype"),
        (["--model-type", "mixtral"], "model_type"),
        (["--heads", "3"], "heads"),
        (["--optimizer-implementation", "adam"], "optimizer_implementation"),
        (["--memory-limit", "4 MiB"], "memory_limit"),
    ],
)
def test_bad_arguments_exit_2_naming_the_field(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad argument prints the rule naming its field on stderr and exits with 2; nothing is measured."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: measure_step_gpu") and field in err


def test_defaults() -> None:
    """The command line's defaults: a small BF16 Llama with SDPA, foreach AdamW (PyTorch's CUDA default)."""
    ns = parser().parse_args([])
    assert (ns.model_type, ns.dtype, ns.attention, ns.optimizer_implementation) == ("llama", "bfloat16", "sdpa",
                                                                                   "foreach")  # fmt: skip
    assert (ns.hidden, ns.layers, ns.seq_len, ns.micro_batch, ns.snapshot, ns.cpu) == (128, 2, 64, 2, None, False)
