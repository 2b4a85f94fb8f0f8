"""Best-of-N under a deadline in emulated time and the batch cost it rests on."""

import random
from pathlib import Path

import pytest

from wafer_reasoner.emulator import Emulator, load_stacks, load_targets, stack_for
from wafer_reasoner.emulator.deadline import batch_time, best_row, candidates_within, choose_within_deadline
from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.runtime.best_of_n import EmulatedBestOfN
from wafer_reasoner.runtime.resources import SOURCE_CONFIG
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.understanding import outside
from wafer_reasoner.understanding.clauses import scene_names
from wafer_reasoner.understanding.context import what_is_asked

TINY = Path(__file__).resolve().parent / "data" / "tiny_planner"
PROMPT_TOKENS = 60
LENGTHS = (9, 12, 7, 20, 11, 9, 15, 10)  # generated tokens of 8 candidates, row order


@pytest.fixture(scope="module")
def llama70b():
    return load_targets(SOURCE_CONFIG / "target_models.yaml")["Llama-3.1-70B"]


STACKS = load_stacks(SOURCE_CONFIG / "stacks.yaml")


def emulator(target, profiles, name):
    """The target on that hardware under its default stack, without the API's serving overhead."""
    return Emulator(target, profiles[name], stack_for(*STACKS, profiles[name]), serving=False)


# ---- the batch cost ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["WSE-3", "H100"])
def test_a_batch_streams_the_weights_once_but_reads_every_kv_cache(llama70b, profiles, name):
    pair = emulator(llama70b, profiles, name)
    one, eight = pair.forward(1, 300.0), pair.forward(1, 300.0, batch=8)
    assert eight.weight_bytes == pytest.approx(one.weight_bytes)
    assert eight.kv_bytes == pytest.approx(8 * one.kv_bytes)
    assert eight.flops == pytest.approx(8 * one.flops)
    assert one.seconds < eight.seconds < 8 * one.seconds  # batching is cheaper than one candidate after another
    assert pair.forward(1, 300.0, batch=1) == one


def test_plan_time_of_one_candidate_is_the_plain_plan_time(llama70b, profiles):
    pair = emulator(llama70b, profiles, "A100")
    assert pair.plan_time(PROMPT_TOKENS, 12, candidates=1) == pair.plan_time(PROMPT_TOKENS, 12)
    assert pair.plan_time(PROMPT_TOKENS, 12, candidates=4).candidates == 4
    with pytest.raises(ValueError, match="candidates"):
        pair.plan_time(PROMPT_TOKENS, 12, candidates=0)


def test_batch_time_runs_until_the_longest_candidate_is_done(llama70b, profiles):
    pair = emulator(llama70b, profiles, "H200")
    assert batch_time(pair, PROMPT_TOKENS, (5, 20, 7)) == pair.plan_time(PROMPT_TOKENS, 20, candidates=3)


# ---- how many fit --------------------------------------------------------------------------------------------


def test_no_deadline_keeps_every_candidate(llama70b, profiles):
    count, timing = candidates_within(emulator(llama70b, profiles, "A100"), PROMPT_TOKENS, LENGTHS, 0.0)
    assert count == len(LENGTHS) and timing.candidates == len(LENGTHS)


def test_the_count_is_the_most_leading_rows_whose_batch_fits(llama70b, profiles):
    pair = emulator(llama70b, profiles, "H100")
    times = [batch_time(pair, PROMPT_TOKENS, LENGTHS[:n]).emulated_ms for n in range(1, 9)]
    for n in range(1, 8):
        if times[n] > times[n - 1]:  # a deadline just below the batch of n + 1 keeps n
            deadline = (times[n - 1] + times[n]) / 2
            count, timing = candidates_within(pair, PROMPT_TOKENS, LENGTHS, deadline)
            assert count == n and timing.emulated_ms <= deadline


def test_when_nothing_fits_the_greedy_candidate_is_kept_and_flagged(llama70b, profiles):
    pair = emulator(llama70b, profiles, "A100")
    choice = choose_within_deadline(pair, PROMPT_TOKENS, LENGTHS, [0.0] * 8, [True] * 8, deadline_ms=1.0)
    assert choice.candidates == 1 and choice.index == 0 and choice.over_deadline
    assert choice.to_dict()["over_deadline"] is True


def test_a_slower_profile_never_gets_more_candidates(llama70b, profiles):
    fast, slow = emulator(llama70b, profiles, "WSE-3"), emulator(llama70b, profiles, "A100")
    assert slow.plan_time(PROMPT_TOKENS, 10).emulated_ms > fast.plan_time(PROMPT_TOKENS, 10).emulated_ms
    seen_fewer = False
    for deadline in (10.0, 50.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0):
        n_fast = candidates_within(fast, PROMPT_TOKENS, LENGTHS, deadline)[0]
        n_slow = candidates_within(slow, PROMPT_TOKENS, LENGTHS, deadline)[0]
        assert n_slow <= n_fast
        seen_fewer |= n_slow < n_fast
    assert seen_fewer


def test_best_row_is_the_valid_one_with_the_highest_score_among_the_kept():
    scores = (-1.0, -0.5, -0.5, -0.1)
    assert best_row(scores, (True, True, True, True), 4) == 3
    assert best_row(scores, (True, True, True, True), 3) == 1  # row 3 not kept; first of equal scores
    assert best_row(scores, (True, False, True, False), 4) == 2
    assert best_row(scores, (False, False, False, True), 3) == 0  # none valid among the kept: greedy


def test_bad_arguments_are_refused(llama70b, profiles):
    pair = emulator(llama70b, profiles, "H100")
    with pytest.raises(ValueError, match="one entry per candidate"):
        choose_within_deadline(pair, PROMPT_TOKENS, (5, 6), (0.0,), (True, True), 10.0)
    with pytest.raises(ValueError, match="deadline_ms"):
        choose_within_deadline(pair, PROMPT_TOKENS, (5,), (0.0,), (True,), -1.0)
    with pytest.raises(ValueError, match="at least one"):
        candidates_within(pair, PROMPT_TOKENS, (), 10.0)


# ---- with a real model ---------------------------------------------------------------------------------------


def examples(count: int, seed: int = 11) -> list:
    rng = random.Random(seed)
    return [speech_corpus.sample(rng, speech_corpus.HELDOUT) for _ in range(count)]


def test_each_candidate_is_the_same_whatever_the_batch_size():
    """Row k's tokens do not depend on N, so keeping the first n rows is what a batch of n would have made."""
    wide = PlannerModel(TINY, engine_config=EngineConfig(candidates=8, seed=3, temperature=1.5, top_k=0))
    narrow = PlannerModel(TINY, engine_config=EngineConfig(candidates=3, seed=3, temperature=1.5, top_k=0))
    differing_rows = 0
    for example in examples(6):
        many = wide.generate(example["scene"], example["say"])
        few = narrow.generate(example["scene"], example["say"])
        assert many.candidate_texts[:3] == few.candidate_texts
        assert many.candidate_scores[:3] == pytest.approx(few.candidate_scores, abs=1e-4)
        differing_rows += len(set(many.candidate_texts)) > 1
    assert differing_rows  # the sampled rows really differ from one another


def test_the_wrapper_chooses_only_among_the_candidates_that_fit(llama70b, profiles):
    model = PlannerModel(TINY, engine_config=EngineConfig(candidates=6, seed=1, temperature=1.5, top_k=0))
    slow = emulator(llama70b, profiles, "A100")
    for example in examples(4, seed=5):
        wrapped = EmulatedBestOfN(model, slow, deadline_ms=1.0)  # nothing fits: the greedy row only
        generation = wrapped.generate(example["scene"], example["say"])
        assert wrapped.last_choice.candidates == 1 and wrapped.last_choice.over_deadline
        assert generation.text == generation.candidate_texts[0] and generation.candidates == 1
        everything = EmulatedBestOfN(model, slow, deadline_ms=0.0, accept=lambda text: True)
        generation = everything.generate(example["scene"], example["say"])
        choice = everything.last_choice
        assert choice.candidates == 6 and not choice.over_deadline
        finished = [row for row in range(6) if generation.candidate_finished[row]]
        if finished:
            best = max(finished, key=lambda row: generation.candidate_scores[row])
            assert generation.text == generation.candidate_texts[best]


def test_a_greedy_model_passes_through_unchanged(llama70b, profiles):
    model = PlannerModel(TINY)
    example = examples(1)[0]
    plain = model.generate(example["scene"], example["say"])
    wrapped = EmulatedBestOfN(model, emulator(llama70b, profiles, "WSE-3"), deadline_ms=50.0)
    through = wrapped.generate(example["scene"], example["say"])
    assert (through.text, through.tokens) == (plain.text, plain.tokens)
    assert wrapped.last_choice.candidates == 1 and wrapped.last_choice.decoded == 1


def test_stopping_candidates_that_cannot_fit_changes_nothing_but_the_work(llama70b, profiles):
    """The engine stops a row once the batch up to it, each unfinished row one token longer, misses the deadline;
    the choice (rows kept, row chosen, time charged) is the one decoding every row to the end gives."""
    model = PlannerModel(TINY, engine_config=EngineConfig(candidates=8, seed=4, temperature=1.5, top_k=0))
    pair = emulator(llama70b, profiles, "H100")
    stopped = saved_steps = 0
    for example in examples(8, seed=21):
        scene, say = example["scene"], example["say"]
        if outside.refused_without_model(scene, what_is_asked(say, scene_names(scene))):
            continue  # refused before the model is asked: no candidate to stop
        full = model.generate(scene, say, accept=lambda text: True)  # every row decoded to the end
        lengths = full.candidate_tokens
        deadline = batch_time(pair, full.prompt_tokens, lengths[:3]).emulated_ms  # some rows fit, some do not
        expected = choose_within_deadline(pair, full.prompt_tokens, lengths, full.candidate_scores,
                                          full.candidate_finished, deadline)
        wrapped = EmulatedBestOfN(model, pair, deadline_ms=deadline, accept=lambda text: True)
        early = wrapped.generate(scene, say)
        choice = wrapped.last_choice
        assert (choice.index, choice.candidates, choice.timing) == (expected.index, expected.candidates,
                                                                    expected.timing)
        assert early.text == full.candidate_texts[expected.index]
        assert not any(early.candidate_stopped[:choice.candidates])  # the kept rows all ran to their end
        stopped += sum(early.candidate_stopped)
        saved_steps += full.decode_steps - early.decode_steps
    assert stopped > 0 and saved_steps > 0


def test_the_verifier_sees_each_candidate_as_it_finishes():
    model = PlannerModel(TINY, engine_config=EngineConfig(candidates=4, seed=2, temperature=1.5, top_k=0,
                                                          prefix_cache=0, export="kv"))
    decoder = model.engine.decoder
    seen = []  # the longest row's cache length when the verifier ran, per call
    verified_early = 0
    for example in examples(8, seed=31):
        if outside.refused_without_model(example["scene"], example["say"]):
            continue  # refused before the model is asked ("sniff a bag"): no candidate to verify
        seen.clear()
        generation = model.generate(example["scene"], example["say"],
                                    accept=lambda text: seen.append(max(decoder.lengths)) or "wait" not in text)
        assert len(seen) == 4  # each row verified once
        verified_early += min(seen) < max(decoder.lengths)  # while another row was still being decoded
        assert generation.candidate_valid == tuple(finished and "wait" not in text for text, finished in
                                                   zip(generation.candidate_texts, generation.candidate_finished))
        if any(generation.candidate_valid):
            best = max((row for row in range(4) if generation.candidate_valid[row]),
                       key=lambda row: generation.candidate_scores[row])
            assert generation.text == generation.candidate_texts[best]
    assert verified_early > 0
