"""The recurrent layers in float32 against PyTorch's recording, within a tolerance.

PyTorch's CPU path projects the whole input sequence with one addmm whose float32 sums MKL orders
otherwise than gradexpr's matrix product (the last bit of some elements differs), and runs a float32
LSTM on oneDNN; the outputs then agree to rounding, not bit for bit. The float64 layers and the cells
are compared exactly (tests/programs/nn/recurrent_*.gx)."""
import pathlib

from click.testing import CliRunner

from gradexpr.cli.main import cli

PROGRAMS = pathlib.Path(__file__).parent / "tolerance"


def test_float32_recurrent_layers_match_pytorch_within_rounding():
    result = CliRunner().invoke(cli, ["check", str(PROGRAMS), "--plain", "--rtol", "1e-4",
                                      "--atol", "1e-4"])  # (values print to 4 decimals: one unit of the last)
    assert result.exit_code == 0, result.output
    assert "2 passed, 0 failed" in result.output


def test_the_tolerance_is_needed_and_small():
    # exactly they differ (the last printed digit of a few values), so the tolerance above is needed
    result = CliRunner().invoke(cli, ["check", str(PROGRAMS / "recurrent_float32.gx"), "--plain"])
    assert result.exit_code != 0
