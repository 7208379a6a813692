"""Public trace formats (sysmodel/engines/traces.py): detection, windows, rows left out by reason, malformed files."""

from pathlib import Path

import numpy as np
import pytest

from sysmodel.engines.traces import Window, load, summary

SAMPLES = Path(__file__).parent.parent / "examples" / "traces"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("sample", "fmt", "rows", "skipped"),
    [
        ("azure_llm_inference_sample.csv", "Azure LLM inference", 24, {"over the model's 4096-token context": 2}),
        ("burstgpt_sample.csv", "BurstGPT", 30, {"zero or negative tokens": 2}),
        ("mooncake_sample.jsonl", "Mooncake", 20, {"over the model's 4096-token context": 15}),
    ],
)
def test_each_sample_loads_by_its_header(sample: str, fmt: str, rows: int, skipped: dict) -> None:
    trace, loaded = load(SAMPLES / sample, context=4096)
    assert (loaded.format, loaded.rows, loaded.skipped) == (fmt, rows, skipped)
    assert len(trace) == loaded.kept == rows - sum(skipped.values())
    assert trace.name.endswith(f"({fmt})") and trace.arrival[0] >= 0
    assert ((trace.prompt + trace.output) <= 4096).all() and np.all(np.diff(trace.arrival) >= 0)


def test_time_units_by_format(tmp_path: Path) -> None:
    azure = write(
        tmp_path,
        "a.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.1578070,100,10\n2023-11-16 18:16:01.6578070,200,20\n",
    )
    assert load(azure)[0].arrival.tolist() == pytest.approx([0.0, 15.5])  # seconds between the timestamps
    moon = write(
        tmp_path,
        "m.jsonl",
        '{"timestamp": 500, "input_length": 9, "output_length": 2, "hash_ids": [0]}\n'
        '{"timestamp": 2750, "input_length": 9, "output_length": 2, "hash_ids": [0]}\n',
    )
    assert load(moon)[0].arrival.tolist() == pytest.approx([0.0, 2.25])  # milliseconds


BURST = (
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "3,ChatGPT,10,5,15,Conversation log\n"  # t = 0 on the trace's clock
    "5,GPT-4,10,0,10,API log\n"  # a failure: no response
    "8,ChatGPT,20,5,25,Conversation log\n"  # t = 5
    "13,GPT-4,30,5,35,Conversation log\n"  # t = 10
    "23,ChatGPT,40,5,45,API log\n"  # t = 20
)


def test_window_scale_and_filters(tmp_path: Path) -> None:
    path = write(tmp_path, "b.csv", BURST)
    trace, loaded = load(path, Window(time_scale=0.5, start=5, duration=10))
    assert trace.arrival.tolist() == [0.0, 2.5] and trace.prompt.tolist() == [20, 30]  # t = 5 and 10, halved
    assert loaded.skipped == {"outside the --start/--duration window": 3}  # the failure is outside too
    trace, loaded = load(path, where=["Model=ChatGPT", "Log Type=Conversation log"])
    assert trace.prompt.tolist() == [10, 20] and loaded.skipped == {"not matching --trace-where": 3}
    trace, loaded = load(path, context=40)
    assert loaded.skipped == {"zero or negative tokens": 1, "over the model's 40-token context": 1}
    assert summary(loaded, "b.csv") == (
        "b.csv: BurstGPT trace, 5 rows, 3 kept; skipped: 1 zero or negative tokens, 1 over the model's 40-token context"
    )
    with pytest.raises(ValueError, match="--trace-where: b.csv has no column 'model'; its columns: Timestamp"):
        load(path, where=["model=ChatGPT"])
    with pytest.raises(ValueError, match=r"no request left \(5 rows, 0 kept; skipped: 5 outside"):
        load(path, Window(start=100))
    with pytest.raises(ValueError, match="--time-scale: 0 not allowed"):
        Window(time_scale=0)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\nyesterday,1,1\n",
         "a.csv line 3: TIMESTAMP: 'yesterday' is not a date and time"),
        ("b.csv", BURST.replace("20,5,25", "twenty,5,25"), "b.csv line 4: Request tokens: 'twenty' is not a number"),
        ("b.csv", BURST.replace("30,5,35", "30,5.5,35"), "b.csv line 5: Response tokens: '5.5' is not a whole number"),
        ("m.jsonl", '{"timestamp": 1, "input_length": 9, "output_length": 2}\n{"timestamp": 2,\n',
         "m.jsonl line 2: not a JSON object"),
        ("m.jsonl", '{"timestamp": 1, "input_length": 9, "output_length": 2}\n{"timestamp": 2, "input_length": 9}\n',
         "m.jsonl line 2: output_length: None is not a number"),
        ("x.csv", "time,in,out\n1,2,3\n", r"x.csv line 1: columns \['time', 'in', 'out'\] match no trace format"),
    ],
)  # fmt: skip
def test_malformed_files_are_refused_by_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        load(write(tmp_path, name, text))
    assert "\n" not in str(err.value)


def test_the_kits_own_format_loads_as_before(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "arrival_s,prompt_tokens,output_tokens\n1,10,5\n3,20,6\n")
    trace, loaded = load(path, Window(time_scale=2))
    assert (trace.name, loaded.format, trace.arrival.tolist()) == ("t", "membound", [0.0, 4.0])
    with pytest.raises(ValueError, match="line 3: prompt_tokens"):  # every row must be servable, as before
        load(write(tmp_path, "u.csv", "arrival_s,prompt_tokens,output_tokens\n1,10,5\n3,0,6\n"))


def test_cli_names_the_format_and_refuses_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sysmodel.cli import main

    args = ["serve", "--model", "llama2-7b", "--out", str(tmp_path / "o"), "--trace"]
    assert main([*args, str(SAMPLES / "mooncake_sample.jsonl"), "--time-scale", "0.5"]) == 0
    cap = capsys.readouterr()
    assert "Mooncake trace, 20 rows, 5 kept; skipped: 15 over the model's 4096-token context" in cap.err
    assert "mooncake_sample (Mooncake) (the file's arrival times) | 5 requests" in cap.out
    bad = write(tmp_path, "m.jsonl", '{"timestamp": 1, "input_length": 9, "output_length": 2}\n[1]\n')
    assert main([*args, str(bad)]) == 2
    assert capsys.readouterr().err == "membound serve: m.jsonl line 2: not a JSON object\n"
    assert main([*args, "fixed", "--duration", "5"]) == 2
    assert "--duration, --trace-where: only for a trace file" in capsys.readouterr().err


def test_readme_trace_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guide's one example per trace format (the block after "Public traces") runs as written."""
    import shlex

    from sysmodel.cli import main

    root = SAMPLES.parent.parent
    text = (root / "docs" / "guide.md").read_text().split("**Public traces**", 1)[1]
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("membound ")]
    assert {Path(c[c.index("--trace") + 1]).name for c in commands} == {p.name for p in SAMPLES.iterdir()}
    monkeypatch.chdir(root)
    for i, args in enumerate(commands):
        assert main([*args, "--out", str(tmp_path / str(i))]) == 0
