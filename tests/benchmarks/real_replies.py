"""Collect real replies of a real local model, for a hand-labelled corpus of the move parser (issue 21, point 2a).

SmolLM2-135M-Instruct on llama.cpp's server (tests/support/llama_server.py; set it up with tests/realmodel/setup.sh)
plays one experiment through ``pdbench run``: every reply format that is free text to the parser (``free``,
``json``, ``label``), every persona in personas/, both label sets (C/D and J/F), against TFT, at
temperature 1.0 so that replies vary. Every move reply it wrote (re-asks included) is read back from the
``calls`` table; distinct replies per label set are written, shuffled and WITHOUT labels or the parser's reading,
for a labeller who never reads the parser (``--out``); the file's ``id``s key the labels.

    python tests/benchmarks/real_replies.py --out /tmp/real_unlabelled.yaml [--rounds 2] [--replicates 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support import llama_server  # noqa: E402

FORMATS = ("free", "json", "label")
LABELS = {"CD": None, "JF": {"cooperate": "J", "defect": "F"}}
OPPONENTS = ("TFT",)


def experiment(model: str, rounds: int, replicates: int) -> dict[str, object]:
    personas = sorted(p.stem for p in (ROOT / "personas").glob("*.md"))
    conditions = []
    for fmt in FORMATS:
        for persona in personas:
            for labels, names in LABELS.items():
                for opponent in OPPONENTS:
                    prompts: dict[str, object] = {"answer_format": fmt}
                    if names:
                        prompts["labels"] = names
                    agent = {"model": model, "temperature": 1.0, "max_tokens": 120, "persona": persona,
                             "prompts": prompts, "parse": {"max_retries": 1, "on_failure": "defect"},
                             "limits": {"concurrency": 1}}  # fmt: skip
                    conditions.append({"name": f"{fmt}_{persona}_{labels}_vs_{opponent}", "agent_a": agent,
                                       "agent_b": {"policy": opponent}})  # fmt: skip
    return {"run": {"seed": 21}, "horizon": {"type": "fixed", "n_rounds": rounds},
            "experiment": {"replicates": replicates, "conditions": conditions}}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--replicates", type=int, default=1)
    args = parser.parse_args()
    reason = llama_server.missing()
    if reason:
        sys.exit(f"error: {reason}")
    pdbench = str(Path(sys.executable).with_name("pdbench"))
    model = f"openai/{llama_server.MODEL_NAME}"
    with llama_server.LlamaServer() as server, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        config = tmp / "real.yaml"
        config.write_text(yaml.safe_dump(experiment(model, args.rounds, args.replicates), sort_keys=False))
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local-none"}
        subprocess.run([pdbench, "run", str(config), "--results", str(tmp), "--run-id", "real", "--no-cache"],
                       check=True, env=env)  # fmt: skip
        query = (
            "SELECT g.condition, c.response_text FROM calls c JOIN games g USING (run_id, game_id) "
            "WHERE c.purpose = 'move' AND c.response_text IS NOT NULL ORDER BY g.condition, c.game_id, c.round"
        )
        out = subprocess.run([pdbench, "sql", query, "--results", str(tmp), "--format", "json"], check=True,
                             env=env, capture_output=True, text=True).stdout  # fmt: skip
    seen: set[tuple[str, str]] = set()
    entries = []
    for row in json.loads(out):
        fmt, persona, labels = row["condition"].split("_")[:3]
        text = row["response_text"]
        if (labels, text) in seen:
            continue
        seen.add((labels, text))
        entries.append({"labels": labels, "answer_format": fmt, "persona": persona, "text": text})
    random.Random(21).shuffle(entries)
    with args.out.open("w") as f:
        for i, entry in enumerate(entries):
            f.write("- " + yaml.safe_dump({"id": i, **entry}, default_flow_style=True, allow_unicode=True,
                                          width=1_000_000).strip() + "\n")  # fmt: skip
    print(f"{len(entries)} distinct replies ({len(json.loads(out))} move replies) -> {args.out}")


if __name__ == "__main__":
    main()
