"""Train the planner from scratch on the generated corpus and export it (``make train``).

    python -m wafer_reasoner.training.train [--minutes M] [--out runs/planner]

RECIPE is the shipped model's (docs/MODEL_CARD.md): the speech corpus, a spelled open vocabulary, mentions grounded
by understanding/ before the model reads them; flags override it. The output goes to ``--out``, never over the
shipped model: ship it by copying the folder to wafer_reasoner/models after ``make eval``.
Fixed seed; the corpus is generated on the fly (no data set on disk). Every ``--eval-every`` steps the
learning curve (loss, exact match on train-family and held-out examples) is printed and appended to
``<out>/training_log.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from wafer_reasoner.engine.prompt import build_prompt, plan_to_tokens, tokens_to_plan
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.training.model import Planner, PlannerConfig
from wafer_reasoner.training.vocab import build_tokenizer

IGNORE = -100
# the shipped model's recipe (docs/MODEL_CARD.md); flags override it
RECIPE = dict(minutes=118.0, steps=12000, batch=64, lr=1.5e-3, hidden=192, layers=4, heads=4, context=256, warmup=300,
              eval_every=1000, out="runs/planner")


PART_SHARE = 0.4  # of multi-clause examples, trained as one of their parts (the planner plans parts one by one)


def sample_training_example(rng: random.Random) -> dict:
    """A whole utterance, or one part of it with the robot's state and "it" as the planner sees them."""
    example = speech_corpus.sample(rng, speech_corpus.TRAIN)
    if example["parts"] and rng.random() < PART_SHARE:
        text, plan, scene, antecedent = rng.choice(example["parts"])
        example = {**example, "say": text, "plan": plan, "scene": scene, "antecedent": antecedent}
    return example


def evaluation_sets(seed: int, count: int):
    """(train-family examples, held-out examples) for the learning curve."""
    rng_train, rng_heldout = random.Random(seed + 1), random.Random(seed + 2)
    categories = list(speech_corpus.HELDOUT_CATEGORIES.values())
    train = [speech_corpus.sample(rng_train) for _ in range(count)]
    heldout = [speech_corpus.sample(rng_heldout, categories[k % len(categories)]) for k in range(count)]
    return train, heldout


def encode_example(tokenizer, example: dict):
    """(input ids, target ids with the prompt masked) for teacher forcing."""
    prompt = build_prompt(example["scene"], example["say"], tokenizer, example.get("antecedent", ""))
    output = plan_to_tokens(example["plan"], prompt, tokenizer)
    ids = [tokenizer.id(t) for t in prompt.tokens] + [tokenizer.id(t) for t in output]
    targets = [IGNORE] * (len(prompt.tokens) - 1) + ids[len(prompt.tokens):] + [IGNORE]
    return ids, targets


def length_bucketed_batches(tokenizer, rng: random.Random, batch_size: int, context: int, pool: int = 8,
                            skipped: dict | None = None):
    """`pool` batches at a time from examples sorted by length: less padding, the same data distribution.
    Examples longer than the context (a rare long, noisy, spelled compound) are drawn again: the engine could
    not serve them either. So are examples whose gold plan names an object the prompt builder's grounding
    did not find; ``skipped`` counts both, and the log reports them."""
    skipped = {} if skipped is None else skipped
    while True:
        rows = []
        while len(rows) < batch_size * pool:
            try:
                row = encode_example(tokenizer, sample_training_example(rng))
            except ValueError:
                skipped["not_expressible"] = skipped.get("not_expressible", 0) + 1
                continue
            if len(row[0]) <= context:
                rows.append(row)
            else:
                skipped["too_long"] = skipped.get("too_long", 0) + 1
        rows.sort(key=lambda row: len(row[0]))
        batches = [rows[k:k + batch_size] for k in range(0, len(rows), batch_size)]
        rng.shuffle(batches)
        yield from (collate(tokenizer, batch) for batch in batches)


def make_batch(tokenizer, rng: random.Random, batch_size: int):
    return collate(tokenizer, [encode_example(tokenizer, sample_training_example(rng)) for _ in range(batch_size)])


def collate(tokenizer, rows: list):
    batch_size = len(rows)
    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.full((batch_size, width), tokenizer.pad_id, dtype=torch.long)  # [B, S] right-padded
    targets = torch.full((batch_size, width), IGNORE, dtype=torch.long)
    mask = torch.zeros((batch_size, width), dtype=torch.long)
    for row, (ids, target) in enumerate(rows):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        targets[row, : len(target)] = torch.tensor(target)
        mask[row, : len(ids)] = 1
    return input_ids, mask, targets


@torch.no_grad()
def greedy_decode(model: Planner, tokenizer, prompts, max_new_tokens: int = 64) -> list:
    """Batched greedy decoding with the KV cache, prompts left-padded (as the engine does)."""
    width = max(len(p.tokens) for p in prompts)
    max_new_tokens = min(max_new_tokens, model.config.context_length - width)  # positions past it do not exist
    batch = len(prompts)
    input_ids = torch.full((batch, width), tokenizer.pad_id, dtype=torch.long)
    mask = torch.zeros((batch, width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids = [tokenizer.id(t) for t in prompt.tokens]
        input_ids[row, width - len(ids):] = torch.tensor(ids)
        mask[row, width - len(ids):] = 1
    logits, past = model(input_ids, mask)
    outputs = [[] for _ in range(batch)]
    done = torch.zeros(batch, dtype=torch.bool)
    for _ in range(max_new_tokens):
        next_ids = logits[:, -1].argmax(-1)  # [B]
        for row in range(batch):
            if not done[row]:
                outputs[row].append(tokenizer.tokens[next_ids[row]])
        done |= next_ids == tokenizer.eos_id
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones((batch, 1), dtype=torch.long)], dim=1)
        logits, past = model(next_ids.unsqueeze(1), mask, past)
    return outputs


def exact_match(model, tokenizer, examples, batch_size=64) -> float:
    model.eval()
    correct = 0
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        prompts = [build_prompt(e["scene"], e["say"], tokenizer) for e in chunk]
        for example, prompt, output in zip(chunk, prompts, greedy_decode(model, tokenizer, prompts)):
            correct += tokens_to_plan(output, prompt) == example["plan"]
    model.train()
    return correct / max(1, len(examples))


@torch.no_grad()
def warm_start(model: Planner, checkpoint: Path, tokenizer) -> int:
    """Load a checkpoint (``OUT/planner.pt``) into ``model``: every weight as saved, and the token embeddings
    row by row for the tokens both vocabularies have (the checkpoint's ``tokenizer.json`` beside it); a token the
    checkpoint lacks keeps its fresh initialisation. Returns how many token rows were kept."""
    saved = torch.load(checkpoint, map_location="cpu")
    mismatched = {k: v for k, v in saved["config"].items() if k != "vocab_size" and v != getattr(model.config, k)}
    if mismatched:
        raise SystemExit(f"{checkpoint} differs from the recipe in {mismatched}")
    state = dict(saved["state"])
    old_tokens = json.loads((checkpoint.parent / "tokenizer.json").read_text(encoding="utf-8"))["tokens"]
    old_index = {token: row for row, token in enumerate(old_tokens)}
    embeddings = model.tok.weight.detach().clone()  # [V, C] fresh
    shared = [(row, old_index[token]) for row, token in enumerate(tokenizer.tokens) if token in old_index]
    for row, old_row in shared:
        embeddings[row] = state["tok.weight"][old_row]
    state["tok.weight"] = embeddings
    model.load_state_dict(state)
    return len(shared)


@torch.no_grad()
def init_word_embeddings(model: Planner, tokenizer) -> int:
    """Start every word token's embedding from all-MiniLM-L6-v2's vector of the word (training/minilm.py),
    projected onto the model width by PCA over the vocabulary's words and scaled to the default init (std 0.02):
    words that mean alike start alike. Returns how many rows were set."""
    from wafer_reasoner.training.minilm import MiniLM

    words = [token for token in tokenizer.tokens if token.isalpha() and token.islower() and len(token) > 1]
    vectors = MiniLM.from_wheel().encode(words)  # [W, 384]
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)  # components: [min(W, 384), 384]
    projected = centred @ components[:model.config.hidden_size].T  # [W, C]
    projected *= 0.02 / projected.std()
    rows = torch.tensor([tokenizer.id(word) for word in words])
    model.tok.weight[rows] = torch.from_numpy(projected.astype(np.float32))
    return len(words)


def learning_rate(step: int, total: int, peak: float, warmup: int = 200) -> float:
    """Linear warm-up, then cosine decay to a tenth of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def save_checkpoint(model: Planner, tokenizer, out: Path) -> None:
    """``OUT/planner.pt`` and the ``tokenizer.json`` that ``--resume`` reads beside it."""
    checkpoint = {"config": model.config.to_dict(), "state": model.state_dict(), "kind": tokenizer.kind}
    torch.save(checkpoint, out / "planner.pt")  # for --resume; not shipped (package data is *.onnx, *.json)
    tokenizer.save(out / "tokenizer.json")


def train(args) -> dict:
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    tokenizer = build_tokenizer()
    config = PlannerConfig(
        vocab_size=len(tokenizer), context_length=args.context, hidden_size=args.hidden, num_layers=args.layers,
        num_heads=args.heads, ffn_size=4 * args.hidden,
    )
    model = Planner(config)
    if args.init_embeddings == "minilm":
        initialised = init_word_embeddings(model, tokenizer)
        print(f"{initialised} word embeddings initialised from all-MiniLM-L6-v2", flush=True)
    if args.resume:
        kept = warm_start(model, Path(args.resume), tokenizer)
        print(f"resumed from {args.resume} ({kept} of {len(tokenizer)} token embeddings kept)", flush=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    train_eval, heldout_eval = evaluation_sets(args.seed, args.eval_size)
    log = {"config": config.to_dict(), "parameters": model.num_parameters(), "seed": args.seed,
           "tokenizer_kind": tokenizer.kind, "curve": []}
    print(f"planner: {model.num_parameters():,} parameters, vocab {len(tokenizer)}", flush=True)
    started = time.monotonic()
    deadline = started + args.minutes * 60
    step = 0
    log["skipped_examples"] = {}
    batches = length_bucketed_batches(tokenizer, rng, args.batch, args.context, skipped=log["skipped_examples"])
    while step < args.steps and time.monotonic() < deadline:
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args.steps, args.lr, args.warmup)
        input_ids, mask, targets = next(batches)
        logits, _ = model(input_ids, mask)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        if step % 100 == 0:
            print(json.dumps({"step": step, "loss": round(loss.item(), 4),
                              "s_per_step": round((time.monotonic() - started) / step, 3),
                              "skipped": log["skipped_examples"]}), flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            point = {
                "step": step, "minutes": round((time.monotonic() - started) / 60, 2), "loss": round(loss.item(), 4),
                "s_per_step": round((time.monotonic() - started) / step, 3),
                "train_exact": exact_match(model, tokenizer, train_eval[: args.eval_size // 2]),
                "heldout_exact": exact_match(model, tokenizer, heldout_eval[: args.eval_size // 2]),
            }
            log["curve"].append(point)
            print(json.dumps(point), flush=True)
            save_checkpoint(model, tokenizer, Path(args.out))  # a run stopped later resumes from here
    log["steps"] = step
    log["train_minutes"] = round((time.monotonic() - started) / 60, 2)
    log["final_train_exact"] = exact_match(model, tokenizer, train_eval)
    log["final_heldout_exact"] = exact_match(model, tokenizer, heldout_eval)
    print(json.dumps({k: log[k] for k in ("steps", "train_minutes", "final_train_exact", "final_heldout_exact")}))
    return {"model": model, "tokenizer": tokenizer, "log": log}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="folder for planner.onnx and its files (default runs/planner; ship by copying "
                        "it to wafer_reasoner/models after `make eval`)")
    # unset flags take the recipe (RECIPE)
    parser.add_argument("--minutes", type=float, help="wall-clock budget for the training loop")
    parser.add_argument("--steps", type=int, help="optimizer steps (the LR schedule's length)")
    parser.add_argument("--batch", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--layers", type=int)
    parser.add_argument("--heads", type=int)
    parser.add_argument("--context", type=int, help="context length (prompt + plan tokens)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--eval-every", type=int)
    parser.add_argument("--eval-size", type=int, default=400)
    parser.add_argument("--no-export", action="store_true", help="train and report only")
    parser.add_argument("--resume", default=None, help="start from this checkpoint (OUT/planner.pt), not scratch; "
                        "token embeddings carry over by token, so the vocabulary may have changed")
    parser.add_argument("--warmup", type=int, help="learning-rate warm-up steps")
    parser.add_argument("--init-embeddings", choices=("random", "minilm"), default="random",
                        help="word embeddings from scratch, or from all-MiniLM-L6-v2 (the item-4 experiment)")
    args = parser.parse_args(argv)
    for name, value in RECIPE.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)  # before training, so a bad path fails fast
    result = train(args)
    save_checkpoint(result["model"], result["tokenizer"], out)
    (out / "training_log.json").write_text(json.dumps(result["log"], indent=1))
    if not args.no_export:
        from wafer_reasoner.training.export import export_model

        export_model(result["model"], result["tokenizer"], out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
