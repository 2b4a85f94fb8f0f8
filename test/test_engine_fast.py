"""The fast engine on a tiny random model (test/data/tiny_planner, same layout as the shipped one; no torch needed).

Exact token sequences are compared, the way onnxruntime-genai tests its search on tiny random models: the
cached, chunked, batched engine must choose the same tokens as recomputing the whole sequence without a cache.
Both float32 exports run it: ``kv`` (the in-place KV graph, the engine's default) and ``genai`` (planner.onnx).
"""

import os
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wafer_reasoner.engine.fast_engine import EngineConfig, PrefixCache, PrefixEntry, Sampler
from wafer_reasoner.engine.grammar import grammar_for_query
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.engine.prompt import FIXED_PART, build_prompt, tokens_to_plan
from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.runtime.query import verifier_accepts
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.understanding import clauses, outside
from wafer_reasoner.understanding.context import what_is_asked

TINY = Path(__file__).resolve().parent / "data" / "tiny_planner"
PROPERTY_CASES = int(os.environ.get("WAFER_PROPERTY_CASES", "300"))  # the engine benchmark runs 10,000
EXACT_EXPORTS = ("kv", "genai")  # float32: the same tokens as the reference loop
ONE_CLAUSE = replace(speech_corpus.TRAIN, clauses=(1.0,))  # one part: generate() plans it in one pass


def make(export: str = "kv", **config) -> PlannerModel:
    return PlannerModel(TINY, engine_config=EngineConfig(export=export, **config))


@pytest.fixture(scope="module")
def greedy():
    return make(prefix_cache=0)


@pytest.fixture(scope="module")
def reference():
    return PlannerModel(TINY, engine="reference")


def query(seed: int):
    """A one-part utterance that asks in every sentence: generate() plans it as build_prompt() writes it."""
    rng = random.Random(seed)
    while True:
        example = speech_corpus.sample(rng, ONE_CLAUSE)
        say = example["say"]
        if len(clauses.split_clauses(say)) == 1 and what_is_asked(say) == say and \
                not outside.refused_without_model(example["scene"], say):
            return example["scene"], say


def prompt_ids(model, scene, say) -> list:
    return [model.tokenizer.id(t) for t in build_prompt(scene, say, model.tokenizer).tokens]


def recomputed_greedy(model, scene, say, *, constrained=True) -> list:
    """Greedy tokens with no cache at all: the whole sequence is run again for every token."""
    prompt = build_prompt(scene, say, model.tokenizer)
    ids = prompt_ids(model, scene, say)
    cursor = grammar_for_query(model.tokenizer, prompt, scene, say).cursor(model.max_new_tokens)
    out = []
    while len(out) < model.max_new_tokens:
        sequence = np.array([ids + out], dtype=np.int64)  # [1, S]
        logits, _ = model._step(sequence, np.ones_like(sequence), model._empty_past(1))
        allowed = cursor.options() if constrained else np.arange(len(model.tokenizer))  # [k]
        token = int(allowed[np.argmax(logits[0, -1, allowed])])
        out.append(token)
        if constrained:
            cursor.advance(token)
        if token == model.tokenizer.eos_id:
            break
    return out


def decoded_ids(model, scene, say) -> tuple:
    prompt = build_prompt(scene, say, model.tokenizer)
    grammar = grammar_for_query(model.tokenizer, prompt, scene, say) if model.engine.config.constrained else None
    return model.engine.decode(prompt_ids(model, scene, say), grammar)


@pytest.mark.parametrize("export", EXACT_EXPORTS)
@pytest.mark.parametrize("seed", range(12))
def test_cached_constrained_decoding_equals_recomputing_the_whole_sequence(reference, export, seed):
    scene, say = query(seed)
    assert list(decoded_ids(make(export, prefix_cache=0), scene, say).tokens) == recomputed_greedy(reference, scene,
                                                                                                  say)


@pytest.mark.parametrize("export", EXACT_EXPORTS)
@pytest.mark.parametrize("seed", range(6))
def test_unconstrained_fast_engine_equals_the_reference_loop_and_the_recomputation(reference, export, seed):
    plain = make(export, constrained=False, prefix_cache=0)
    scene, say = query(100 + seed)
    tokens = list(decoded_ids(plain, scene, say).tokens)
    assert tokens == recomputed_greedy(reference, scene, say, constrained=False)
    assert tokens_to_plan([plain.tokenizer.tokens[t] for t in tokens], build_prompt(scene, say, plain.tokenizer)) == \
        reference.generate(scene, say).text


@pytest.mark.parametrize("export", EXACT_EXPORTS)
def test_chunked_and_padded_batch_rows_match_each_row_alone(export):
    decoder = make(export, prefix_cache=0).engine.decoder
    rows = [[1, 5, 9, 30, 31], [1, 5, 7], [1, 40]]
    decoder.reset(1)
    alone = []
    for chunk in rows:
        decoder.reset(1)
        alone.append(decoder.feed([chunk])[0, len(chunk) - 1].copy())  # [V]
    batched = make(export, candidates=3, prefix_cache=0).engine.decoder
    batched.reset(1)
    batched.feed([[1]])
    batched.broadcast(3)
    logits = batched.feed([chunk[1:] for chunk in rows])  # [3, 4, V]: rows padded at the end
    for row, chunk in enumerate(rows):
        np.testing.assert_allclose(logits[row, len(chunk) - 2], alone[row], rtol=1e-4, atol=1e-4)
    follow = batched.feed([[3], [3, 4], [3]])  # [3, 2, V]: the earlier padding stays invisible
    decoder.reset(1)
    expected = decoder.feed([rows[1] + [3, 4]])[0, -1]  # [V]
    np.testing.assert_allclose(follow[1, 1], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", range(6))
def test_prefix_reuse_gives_the_same_plan_as_computing_everything(greedy, seed):
    cached = make(prefix_cache=4)
    scene, say = query(200 + seed)
    cached.generate(scene, "bring me the cup")  # shares the start of the prompt
    first = cached.generate(scene, say)
    again = cached.generate(scene, say)  # the same scene and utterance: the whole prompt is reused
    plain = greedy.generate(scene, say)
    assert first.text == again.text == plain.text
    assert first.reused_tokens > 0 and again.reused_tokens == again.prompt_tokens and plain.reused_tokens == 0


def test_prepare_pins_the_fixed_part_computed_once(greedy):
    model = make(prefix_cache=0)
    scene, say = query(300)
    model.prepare(scene)
    fixed_length = len(FIXED_PART)
    result = model.generate(scene, say)
    assert result.reused_tokens == fixed_length
    assert result.text == greedy.generate(scene, say).text


def test_best_of_n_with_one_candidate_is_greedy_whatever_the_sampler(greedy):
    for seed in range(8):
        scene, say = query(400 + seed)
        one = make(candidates=1, temperature=5.0, top_k=0, seed=seed, prefix_cache=0)
        assert one.generate(scene, say).text == greedy.generate(scene, say).text


@pytest.mark.parametrize("seed", range(4))
def test_best_of_n_keeps_the_greedy_row_and_returns_the_best_accepted(greedy, seed):
    many = make(candidates=4, temperature=1.5, top_k=0, seed=seed, prefix_cache=0)
    scene, say = query(500 + seed)
    decoded = decoded_ids(many, scene, say)
    assert list(decoded.all_tokens[0]) == list(decoded_ids(greedy, scene, say).tokens)
    assert decoded.candidates == 4 and decoded.finished == 4
    assert len(set(decoded.all_tokens)) > 1, "sampled rows should differ from the greedy one"
    assert decoded.score == max(decoded.scores) and decoded.tokens in decoded.all_tokens
    best = many.generate(scene, say)
    runner_up = many.generate(scene, say, accept=lambda text: text != best.text)
    assert runner_up.text != best.text and runner_up.score <= best.score
    parse_plan(runner_up.text)


def test_best_of_n_is_deterministic_for_a_seed():
    scene, say = query(600)
    first = make(candidates=4, temperature=1.5, seed=3, prefix_cache=0).generate(scene, say)
    second = make(candidates=4, temperature=1.5, seed=3, prefix_cache=0).generate(scene, say)
    assert first.text == second.text and first.score == second.score


def test_a_passed_deadline_returns_the_first_finished_candidate():
    model = make(candidates=4, temperature=1.5, top_k=0, wall_deadline_ms=1e-9, prefix_cache=0)
    scene, say = query(700)
    decoded = decoded_ids(model, scene, say)
    assert 1 <= decoded.finished < 4 or all(len(t) == len(decoded.all_tokens[0]) for t in decoded.all_tokens)
    assert decoded.tokens[-1] == model.tokenizer.eos_id
    parse_plan(model.generate(scene, say).text)


def test_forced_runs_cost_no_decode_step():
    scene, say = query(800)
    result = make(prefix_cache=0, draft_tokens=0).generate(scene, say)
    assert result.forced_tokens > 0 and result.drafted_tokens == 0
    assert result.tokens == result.decode_steps + 1 + result.forced_tokens  # one chosen token per model run
    unforced = make(forced_runs=False, prefix_cache=0, draft_tokens=0).generate(scene, say)
    assert unforced.text == result.text and unforced.decode_steps == result.tokens - 1


def test_drafts_from_past_plans_save_steps_and_never_change_the_plan():
    drafting = make(prefix_cache=0, draft_tokens=8)
    plain = make(prefix_cache=0, draft_tokens=0)
    saved = 0
    for seed in range(12):
        scene, say = query(850 + seed % 6)  # each query twice: the second time its plan's shape is known
        result = drafting.generate(scene, say)
        assert result.text == plain.generate(scene, say).text
        chosen = result.tokens - result.forced_tokens - result.drafted_tokens  # one per model run, +1 at the end
        assert chosen - result.decode_steps in (0, 1)  # 0: the plan ended inside an accepted draft
        saved += result.drafted_tokens
    assert saved > 0


def test_the_decode_loop_allocates_no_new_buffers_after_warm_up():
    greedy = make("genai", prefix_cache=0)
    decoder = greedy.engine.decoder
    scene, say = query(900)
    greedy.generate(scene, say)
    shapes, kv = len(decoder._values), [id(buffer) for buffer in decoder._kv]
    greedy.generate(*query(901))
    new_shapes = len(decoder._values) - shapes  # only logits/ids views of chunk lengths not seen before
    assert all(key[0] in ("logits", "ids") for key in list(decoder._values)[shapes:]) and new_shapes <= 8
    assert [id(buffer) for buffer in decoder._kv] == kv


@pytest.mark.parametrize("block", range(max(1, PROPERTY_CASES // 100)))
def test_constrained_output_always_parses_over_random_scenes(greedy, block):
    sampled = make(candidates=2, temperature=2.0, top_k=0, seed=block, prefix_cache=0)
    for case in range(block * 100, min(PROPERTY_CASES, block * 100 + 100)):
        scene, say = query(10_000 + case)
        for model in (greedy, sampled):
            result = model.generate(scene, say)
            parse_plan(result.text)


def test_sampler_only_returns_allowed_tokens_and_honours_top_k():
    sampler = Sampler(temperature=1.0, top_k=2, seed=0)
    logits = np.array([5.0, 4.0, 3.0, -1.0, 9.0], dtype=np.float32)  # [V]
    allowed = np.array([0, 1, 2, 3])
    drawn = {sampler.sample(logits, allowed) for _ in range(200)}
    assert drawn == {0, 1}


def test_prefix_cache_finds_the_longest_common_prefix_and_evicts_the_oldest():
    cache = PrefixCache(capacity=2)
    entry = lambda tokens, pinned=False: PrefixEntry(tuple(tokens), np.zeros(1), np.zeros(1), pinned)  # noqa: E731
    cache.store(entry([1, 2], pinned=True))
    cache.store(entry([1, 2, 3, 4]))
    cache.store(entry([1, 2, 3, 5]))
    assert cache.lookup((1, 2, 3, 4, 9))[1] == 4
    assert cache.lookup((1, 2, 3, 5))[1] == 4  # exact: whole prompt, logits stored
    assert cache.lookup((1, 2, 3))[1] == 2  # a prefix of an entry: the last token is fed again
    cache.store(entry([7]))
    assert [e.tokens for e in cache.entries] == [(1, 2), (1, 2, 3, 5), (7,)]  # pinned stays


def test_engine_config_from_node_parameters():
    params = {"engine_candidates": 4, "engine_deadline_ms": 80, "engine_constrained": True, "model_dir": ""}
    config = EngineConfig.from_params(params)
    assert config == EngineConfig(candidates=4)  # engine_deadline_ms is emulated time: the core's, not the engine's
    with pytest.raises(ValueError, match="candidates"):
        EngineConfig.from_params({"engine_candidates": 0})


def test_verifier_accepts_accepts_what_the_verifier_accepts():
    from wafer_reasoner.planner.limits import SafetyLimits

    scene, _ = query(950)
    accept = verifier_accepts(scene, SafetyLimits(), now_s=scene.stamp_s)
    assert accept("wait(2)") and accept("clarify(unsupported)")
    assert not accept("rotate(9999)") and not accept("navigate(obj:nothing_here)") and not accept("pick(")


def test_the_io_binding_fallback_decodes_the_same_tokens(greedy):
    from wafer_reasoner.engine.decoder import BoundDecoder

    model = make("genai", prefix_cache=0, draft_tokens=0)
    model.engine.decoder = BoundDecoder(model.session, model.engine.layout, 1, vectors=False)
    assert not model.engine.decoder._runner.vectors
    for seed in range(3):
        scene, say = query(970 + seed)
        assert model.generate(scene, say).text == greedy.generate(scene, say).text


def test_a_known_plan_start_is_drafted_with_the_prompt_and_never_changes_the_plan(greedy):
    drafting = make(prefix_cache=0, draft_tokens=8)
    for seed in range(6):
        scene, say = query(1000 + seed)
        first = drafting.generate(scene, say)
        again = drafting.generate(scene, say)  # its plan now known: the start is fed with the prompt
        expected = greedy.generate(scene, say).text
        assert first.text == again.text == expected
        assert again.decode_steps <= first.decode_steps
        if again.tokens > again.forced_tokens + 1:
            assert again.drafted_tokens > 0


def test_a_prompt_fed_with_a_draft_is_cached_without_it():
    cached = make(prefix_cache=4, draft_tokens=8)
    scene, say = query(1100)
    for _ in range(2):
        cached.generate(scene, say)  # the second time the plan start is drafted after the prompt
    entry = cached.engine.prefix.entries[-1]
    assert entry.kv.shape[2] == len(entry.tokens)
    third = cached.generate(scene, say)  # whole prompt reused from the entry
    assert third.reused_tokens == third.prompt_tokens and third.text == cached.generate(scene, say).text


@pytest.mark.parametrize("export", EXACT_EXPORTS)
def test_save_keeps_only_the_positions_asked_for(export):
    decoder = make(export, prefix_cache=0).engine.decoder
    decoder.reset(1)
    decoder.feed([[1, 5, 9, 30, 31]])
    whole, head = decoder.save(), decoder.save(3)
    assert whole.shape[2] == 5 and head.shape[2] == 3
    np.testing.assert_array_equal(whole[:, :, :3], head)
    with pytest.raises(ValueError):
        decoder.save(6)


def test_the_prefix_cache_stores_prompts_in_slots_it_reuses():
    cached = make(prefix_cache=2)
    buffers = set()
    for seed in range(8):
        scene, say = query(1200 + seed)
        first = cached.generate(scene, say).text
        buffers |= {id(entry.slot[0]) for entry in cached.engine.prefix.entries if entry.slot is not None}
        assert cached.generate(scene, say).text == first  # the stored state is the prompt's
    assert len(buffers) <= 3  # capacity + the one being filled: no new buffer per query
