"""Command line of the family: train, eval, table. ``--help`` on each says more."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch

from relpos_core.schemes.catalogue import ROPE_SCALINGS
from relpos_lab.family import FAMILY_DIR, RESULTS_FILE, checkpoint_path, load_with_vocabulary
from relpos_lab.family.corpus import (
    CORPUS_CHARS,
    CORPUS_FILE,
    CORPUS_NAME,
    CORPUS_SHA256,
    corpus_vocabulary,
    split_point,
    train_ids,
)
from relpos_lab.family.registry import model_config, model_names, scheme_models, specs
from relpos_lab.family.tables import check_readme, readme_tables, write_readme
from relpos_lab.family.train import (
    EVAL_CHARS,
    LENGTH_FACTORS,
    STORAGE_DTYPE,
    TrainSettings,
    bits_per_character,
    eval_span,
    fresh_model,
    load_checkpoint,
    parameter_count,
    save_checkpoint,
    timed_training,
)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__}"


def corpus_record() -> dict[str, Any]:
    return {
        "name": CORPUS_NAME,
        "file": f"relpos_lab/corpus/{CORPUS_FILE}",
        "characters": CORPUS_CHARS,
        "sha256": CORPUS_SHA256,
        "train_characters": split_point(),
        "held_out_characters": CORPUS_CHARS - split_point(),
        "vocabulary_size": corpus_vocabulary().size,
        "eval_characters": EVAL_CHARS,
        "eval_span": "the first eval_characters + 1 characters of the held-out part",
    }


def read_results() -> dict[str, Any]:
    return json.loads(RESULTS_FILE.read_text()) if RESULTS_FILE.exists() else {"models": {}}


def write_results(results: dict[str, Any]) -> None:
    order = {name: i for i, name in enumerate(specs())}
    results["models"] = dict(sorted(results["models"].items(), key=lambda kv: order[kv[0]]))
    RESULTS_FILE.write_text(json.dumps(results, indent=1) + "\n")


def eval_lengths(context: int) -> list[int]:
    return [context * f for f in LENGTH_FACTORS]


def train_command(args: argparse.Namespace) -> None:
    family = read_results().get("training", {})  # how the stored family was trained
    steps = args.steps or family.get("steps") or TrainSettings().steps
    if args.names and family.get("steps") not in (None, steps):
        sys.exit(
            f"--steps {steps} differs from the {family['steps']} steps every stored model of the "
            "family trained for: the family trains alike (leave --steps out, or retrain all)"
        )
    settings = TrainSettings(steps=steps)
    names = args.names or list(model_names())
    FAMILY_DIR.mkdir(parents=True, exist_ok=True)
    ids, vocabulary = train_ids(), corpus_vocabulary()
    span = eval_span()
    for name in names:
        config = model_config(name, vocabulary.size, settings.context)
        model = fresh_model(config, settings)
        print(f"==> {name}: {parameter_count(model)} parameters", flush=True)
        prefix = f"{name:16s}"
        losses, seconds = timed_training(
            model, ids, settings, lambda line, prefix=prefix: print(prefix, line, flush=True)
        )
        path = checkpoint_path(name)
        save_checkpoint(model, vocabulary, path, name=name)
        stored, _, _ = load_checkpoint(path)  # measure what ships: the float16 weights
        start = time.perf_counter()
        bpc = {
            str(L): round(bits_per_character(stored, span, L), 6)
            for L in eval_lengths(settings.context)
        }
        eval_seconds = time.perf_counter() - start
        tail = losses[-100:]
        record = {
            "position": config.position,
            "spec": specs()[name],
            "parameters": parameter_count(model),
            "training_seconds": round(seconds, 1),
            "ms_per_step": round(1000 * seconds / settings.steps, 1),
            "final_train_loss": round(sum(tail) / len(tail), 4),
            "loss_curve": [
                round(sum(losses[s : s + 50]) / len(losses[s : s + 50]), 4)
                for s in range(0, len(losses), 50)
            ],
            "eval_seconds": round(eval_seconds, 1),
            "checkpoint_bytes": path.stat().st_size,
            "bpc": bpc,
            "machine": machine(),  # where its seconds were measured
        }
        results = read_results()
        results["corpus"] = corpus_record()
        if args.names and results.get("training"):  # one model more: the family's record stays
            results["models"][name] = record
            write_results(results)
            print(f"==> {name}: {seconds:.0f} s, loss {record['final_train_loss']}, bpc {bpc}")
            continue
        results["training"] = {
            **settings.to_dict(),
            "architecture": {
                k: v
                for k, v in config.to_dict().items()
                if k in ("d_model", "heads", "layers", "ffn", "vocab")
            },
            "storage_dtype": str(STORAGE_DTYPE).removeprefix("torch."),
            "loss": "cross-entropy in nats per character, mean of the last 100 steps",
            "loss_curve_every": 50,
            "machine": machine(),
        }
        results["models"][name] = record
        write_results(results)
        print(
            f"==> {name}: {seconds:.0f} s, loss {record['final_train_loss']}, bpc {bpc}", flush=True
        )


def bench_command(args: argparse.Namespace) -> None:
    """Training milliseconds per step of each scheme's model, against Shaw's fused path."""
    settings = TrainSettings(steps=args.steps, warmup=1)
    ids, vocabulary = train_ids(), corpus_vocabulary()
    names = args.names or list(scheme_models())
    timings = {}
    for name in names:
        model = fresh_model(model_config(name, vocabulary.size, settings.context), settings)
        timed_training(model, ids, TrainSettings(steps=3, warmup=1))  # warm the allocator
        timings[name] = 1000 * timed_training(model, ids, settings)[1] / settings.steps
    shaw = timings.get("shaw")
    print(
        f"training step: batch {settings.batch} x {settings.context} characters, "
        f"{settings.threads} threads, {machine()}"
    )
    print("| model | ms per step | x shaw (fused banded path) |\n|---|---:|---:|")
    for name, ms in timings.items():
        ratio = f"{ms / shaw:.2f}" if shaw else "-"
        print(f"| `{name}` | {ms:.0f} | {ratio} |")


def eval_command(args: argparse.Namespace) -> None:
    torch.set_num_threads(TrainSettings().threads)
    model, _ = load_with_vocabulary(args.name)
    span = eval_span(args.chars)
    if args.rope_scaling:
        from relpos_lab.family.long_context import scaled_bpc, scaling_config

        config = scaling_config(args.rope_scaling, args.factor, TrainSettings().context)
        bpc = scaled_bpc(model, span, args.length, config)
    else:
        bpc = bits_per_character(model, span, args.length)
    print(f"bits per character: {bpc:.6f}")


def long_command(args: argparse.Namespace) -> None:
    """RoPE's context extension zero-shot and the attention sinks of every scheme's model."""
    from relpos_lab.family.long_context import (
        LONG_CHARS,
        LONG_FILE,
        long_tables,
        measure,
        measure_sinks,
    )

    if args.table:
        print(long_tables(json.loads(LONG_FILE.read_text())))
        return
    torch.set_num_threads(TrainSettings().threads)
    names = args.models or scheme_models()
    unknown = sorted(set(names) - set(scheme_models()))
    if unknown:
        sys.exit(f"--models must name models of {', '.join(scheme_models())}; got {unknown}")
    models = {name: load_with_vocabulary(name)[0] for name in names}
    start = time.perf_counter()
    if args.models:  # the stored run, with these models' sinks and windows measured again
        record = measure_sinks(
            json.loads(LONG_FILE.read_text()), models, eval_span(LONG_CHARS),
            order=scheme_models(),
        )  # fmt: skip
        record["seconds_" + "_".join(args.models)] = round(time.perf_counter() - start, 1)
        LONG_FILE.write_text(json.dumps(record, indent=1) + "\n")
        print(long_tables(record))
        return
    record = measure(models, eval_span(LONG_CHARS), TrainSettings().context)
    record["seconds"] = round(time.perf_counter() - start, 1)
    record["machine"] = machine()
    LONG_FILE.write_text(json.dumps(record, indent=1) + "\n")
    print(long_tables(record))


def finetune_command(args: argparse.Namespace) -> None:
    """RoPE fine-tuned at 4x its training length: no scaling, interpolation, YaRN."""
    from relpos_lab.family.fine_tune import FINE_TUNE_FILE, fine_tune_table, measure, write_record

    if args.table:
        print(fine_tune_table(json.loads(FINE_TUNE_FILE.read_text())))
        return
    torch.set_num_threads(TrainSettings().threads)
    from relpos_lab.family.long_context import ROPE_MODEL

    start = time.perf_counter()
    record = measure(load_with_vocabulary(ROPE_MODEL)[0], train_ids(), steps=args.steps)
    record["seconds"] = round(time.perf_counter() - start, 1)
    record["machine"] = machine()
    write_record(record)
    print(fine_tune_table(record))


def table_command(args: argparse.Namespace) -> None:
    if args.check:
        problems = check_readme(Path(args.check), read_results())
        if problems:
            sys.exit("\n".join(problems))
        print(f"{args.check}: the family tables match results.json")
        return
    if args.write:
        write_readme(Path(args.write), read_results())
        print(f"{args.write}: the family tables rewritten from results.json")
        return
    print(readme_tables(read_results()))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m relpos_lab.family", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train models, write checkpoints and results.json")
    train.add_argument(
        "names",
        nargs="*",
        choices=[[], *specs()],
        metavar="NAME",
        help=f"models to train (default: the shipped ones): {', '.join(specs())}",
    )
    train.add_argument(
        "--steps",
        type=int,
        default=None,
        help="optimizer steps (default: the stored family's, else "
        f"{TrainSettings().steps}); a model added to the family must train as many",
    )
    train.set_defaults(run=train_command)
    bench = commands.add_parser("bench", help="training milliseconds per step of each model")
    bench.add_argument("names", nargs="*", choices=[[], *specs()], metavar="NAME")
    bench.add_argument("--steps", type=int, default=40)
    bench.set_defaults(run=bench_command)
    evaluate = commands.add_parser("eval", help="bits per character of a shipped model")
    evaluate.add_argument("name", choices=model_names(), metavar="NAME")
    evaluate.add_argument("--length", type=int, required=True, help="window length L")
    evaluate.add_argument(
        "--chars",
        type=int,
        default=EVAL_CHARS,
        help=f"held-out characters scored (default {EVAL_CHARS}; L must divide it)",
    )
    evaluate.add_argument(
        "--rope-scaling",
        choices=[s.rope_type for s in ROPE_SCALINGS],
        help="a RoPE model only: scale its rotary frequencies zero-shot (rope_scaling's rope_type)",
    )
    evaluate.add_argument("--factor", type=float, default=4.0, help="rope_scaling's factor s")
    evaluate.set_defaults(run=eval_command)
    long = commands.add_parser(
        "long", help="RoPE's context extension zero-shot, and attention sinks (long_context.json)"
    )
    long.add_argument("--table", action="store_true", help="print the tables of the stored run")
    long.add_argument(
        "--models",
        nargs="+",
        metavar="NAME",
        help="measure only these models' attention sinks and windows, into the stored run",
    )
    long.set_defaults(run=long_command)
    finetune = commands.add_parser(
        "finetune", help="RoPE fine-tuned at 4x its training length (fine_tune.json)"
    )
    finetune.add_argument("--table", action="store_true", help="print the table of the stored run")
    finetune.add_argument("--steps", type=int, default=300, help="fine-tuning steps per run")
    finetune.set_defaults(run=finetune_command)
    table = commands.add_parser("table", help="the README's tables from results.json")
    which = table.add_mutually_exclusive_group()
    which.add_argument("--check", metavar="README", help="fail when the file's tables drift")
    which.add_argument("--write", metavar="README", help="replace the file's tables")
    table.set_defaults(run=table_command)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command == "eval" and (args.length < 1 or args.chars % args.length):
        build_parser().error(
            f"--length must be a positive divisor of --chars ({args.chars}), got {args.length}"
        )
    args.run(args)


if __name__ == "__main__":
    main()
