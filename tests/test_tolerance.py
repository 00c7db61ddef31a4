"""Programs whose output PyTorch itself does not fix to the last bit, against a recording within a
tolerance (tests/tolerance/):

- the float32 LSTM, which PyTorch runs on oneDNN (MkldnnRnnLayerBackward0), whose sums are ordered
  otherwise than gradexpr's;
- pytorch/tutorials' two_layer_net_numpy, a NumPy program: its matrix products are the host's OpenBLAS,
  which picks its kernels (and so the order of its sums) by processor, under CPython as under gradexpr.
"""
import pathlib

from click.testing import CliRunner

from gradexpr.cli.main import cli

PROGRAMS = pathlib.Path(__file__).parent / "tolerance"


def test_programs_match_their_recordings_within_rounding():
    result = CliRunner().invoke(cli, ["check", str(PROGRAMS), "--plain", "--rtol", "1e-4",
                                      "--atol", "1e-4"])  # (values print to 4 decimals: one unit of the last)
    assert result.exit_code == 0, result.output
    assert "2 passed, 0 failed" in result.output


def test_the_lstm_tolerance_is_needed():
    # exactly they differ (the last printed digit of a few values), so the tolerance above is needed
    result = CliRunner().invoke(cli, ["check", str(PROGRAMS / "lstm_float32_onednn.gx"), "--plain"])
    assert result.exit_code != 0
