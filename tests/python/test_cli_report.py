"""`onnxsurgeon report`: one self-contained HTML page, loaded in a real headless Chromium
(Debian's `chromium`): its DOM must carry the report's key text and it must render."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from test_cli import small_model, write
from test_cli_ux import foldable_model


def chromium() -> str:
    """The browser; a missing one FAILS the test (a skip would let CI pass untested)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no headless browser: apt-get install chromium (scripts/bootstrap.sh --test-tools does)", pytrace=False)


def browse(html, tmp_path, *flags: str) -> subprocess.CompletedProcess:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--user-data-dir=" + str(tmp_path / "chromium-profile"),
        *flags,
        html.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def report(tmp_path_factory, corpus, cli_path):
    """The report for simplify on a real CNN, with --check and graphviz drawings."""
    tmp = tmp_path_factory.mktemp("report")
    model = corpus.model("cnn_clutter_op13")
    html = tmp / "report.html"
    env = {**os.environ, "ONNXSURGEON_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            str(cli_path),
            "report",
            "--pass",
            "simplify",
            "--check",
            "2",
            model.path,
            "-o",
            html,
            "--save",
            tmp / "out.onnx",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return html


def test_report_is_self_contained(report):
    text = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "no network access"
    assert "<script" not in text
    assert text.count("<svg") >= 3, "the bar chart and at least one before/after pair"
    assert "op histogram before and after" in text


def test_report_in_headless_chromium(report, tmp_path):
    proc = browse(report, tmp_path, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    for text in (
        "onnxsurgeon report",
        "Summary",
        "Checks",
        "PASSED",
        "numeric check in onnxruntime",
        "onnx checker (full) on the result",
        "Op histogram",
        "Passes",
        "simplify",
        "Rewritten regions",
        "before",
        "after",
    ):
        assert text in dom, text
    assert "graphviz is not installed" not in dom, "dot is installed on the test machine: regions are drawn"

    shot = tmp_path / "report.png"
    proc = browse(report, tmp_path, f"--screenshot={shot}", "--window-size=1200,1800", "--hide-scrollbars")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # A blank page compresses to a few KB; text, bars and graphs do not.
    assert len(png) > 30_000, len(png)


def test_report_without_graphviz_says_so(tmp_path, cli_path):
    src = write(foldable_model(), tmp_path / "in.onnx")
    html = tmp_path / "r.html"
    env = {**os.environ, "PATH": str(tmp_path / "empty-bin")}  # no `dot` on PATH
    proc = subprocess.run(
        [str(cli_path), "report", "--pass", "fold-constants", src, "-o", html], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "graphviz is not installed" in page and "apt-get install graphviz" in page
    assert "Add -&gt; nothing" in page, "the region is still named"


def test_report_needs_an_output(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    assert "--output" in run_cli("report", src, expect_rc=2).stderr


def test_report_shows_a_failed_check_and_exits_1(tmp_path, cli_path):
    """The report is still written (it shows where), the model is not, exit 1."""
    from test_cli_ux import amplified_gelu_model

    src = write(amplified_gelu_model(), tmp_path / "in.onnx")
    html, out = tmp_path / "r.html", tmp_path / "out.onnx"
    env = {**os.environ, "ONNXSURGEON_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(cli_path), "report", "--pass", "rewrite-gelu(to=sigmoid)", "--check", src, "-o", html, "--save", out],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    page = html.read_text()
    assert "FAILED</span> numeric check in onnxruntime" in page and "FAIL Y: max abs" in page
    assert "tolerance: rewrite-gelu(to=sigmoid)" in page
    assert not out.exists()


def test_report_bad_input_is_one_line(tmp_path, cli_path):
    src = tmp_path / "garbage.onnx"
    src.write_bytes(b"\xff\xfe not a model")
    proc = subprocess.run([str(cli_path), "report", src, "-o", tmp_path / "r.html"], capture_output=True, text=True)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1 and "garbage.onnx" in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_report_with_a_target_shows_its_verdict(tmp_path, cli_path, corpus):
    """report --target: the plan's passes are in the pass table, the target's verdict in Checks."""
    model = corpus.model("gelu_op20")
    html = tmp_path / "r.html"
    proc = subprocess.run(
        [str(cli_path), "report", "--target", "trt-8.6", model.path, "-o", html],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "PASSED</span> target trt-8.6: accepted" in page
    assert "<td>rewrite-gelu</td>" in page or "<td>convert-opset</td>" in page
