"""Checks of what the command line prints: one-line errors, one JSON object."""

from __future__ import annotations

import json

from optplan.cli import main


def strict_json(text: str):
    """``json.loads`` that refuses ``Infinity`` and ``NaN`` (Python's own accepts them)."""
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def cli(capsys, argv) -> tuple[int, str, str]:
    """Run ``optplan argv`` in this process; argparse's own exits count as exit codes."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, out, err, *names):
    """Exit 2, nothing on stdout, one stderr line that names each of ``names``."""
    assert code == 2, (code, out, err)
    assert out == "", out
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("optplan: error: "), err
    for name in names:
        assert str(name) in lines[0], (name, lines[0])


def assert_one_json_object(out):
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    data = strict_json(lines[0])
    assert isinstance(data, dict)
    return data
