"""The in-place KV export (training/kv_export.py) and its decoder (engine/static_decoder.py) on the tiny model.

The float32 export must decode exactly what planner.onnx decodes (it is the same weights); the int8 one must keep
the engine's invariants (a row never depends on its neighbours, drafts never change a plan), and the cache must
really be written in place: one buffer, the new rows only.
"""

import random
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.planner_model import EXPORT_FILES, ModelLoadError, PlannerModel, export_path
from wafer_reasoner.engine.static_decoder import StaticDecoder
from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.training import speech_corpus

TINY = Path(__file__).resolve().parent / "data" / "tiny_planner"
ONE_CLAUSE = replace(speech_corpus.TRAIN, clauses=(1.0,))
KV_EXPORTS = ("kv", "kv-int8")


def make(export: str, **config) -> PlannerModel:
    return PlannerModel(TINY, engine_config=EngineConfig(export=export, **config))


def queries(count: int, seed: int = 0) -> list:
    rng = random.Random(seed)
    return [(e["scene"], e["say"]) for e in (speech_corpus.sample(rng, ONE_CLAUSE) for _ in range(count))]


@pytest.mark.parametrize("config", [dict(), dict(constrained=False, draft_tokens=0),
                                    dict(candidates=4, temperature=1.5, top_k=0, seed=2)],
                         ids=["constrained", "plain", "best-of-4"])
def test_the_float32_kv_export_plans_exactly_what_planner_onnx_plans(config):
    kv, genai = make("kv", prefix_cache=0, **config), make("genai", prefix_cache=0, **config)
    assert isinstance(kv.engine.decoder, StaticDecoder) and not isinstance(genai.engine.decoder, StaticDecoder)
    for scene, say in queries(40, seed=len(config)):
        ours, theirs = kv.generate(scene, say), genai.generate(scene, say)
        assert (ours.text, ours.tokens, ours.candidate_texts) == (theirs.text, theirs.tokens, theirs.candidate_texts)


@pytest.mark.parametrize("export", KV_EXPORTS)
def test_a_batch_row_is_exactly_what_it_is_alone(export):
    """Different past lengths and chunk lengths in one step (query_seqlens); int8 quantizes each row on its own."""
    model = make(export, candidates=3, prefix_cache=0)
    decoder = model.engine.decoder
    histories = [[1, 5, 9, 30], [1, 5], [1, 40, 41]]
    chunks = [[31, 32], [7], [42, 43, 44]]
    alone = []
    for history, chunk in zip(histories, chunks):
        decoder.reset(1)
        alone.append(decoder.feed([history + chunk])[0, len(history) + len(chunk) - 1].copy())  # [V]
    decoder.reset(1)
    decoder.feed([[1]])
    decoder.broadcast(3)
    decoder.feed([history[1:] for history in histories])  # rows now at lengths 4, 2, 3
    assert decoder.lengths[:3] == [4, 2, 3]
    logits = decoder.feed(chunks)  # [3, 3, V]
    for row, chunk in enumerate(chunks):
        np.testing.assert_allclose(logits[row, len(chunk) - 1], alone[row], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("export", KV_EXPORTS)
def test_a_forgotten_draft_is_overwritten_by_the_next_chunk(export):
    decoder = make(export, prefix_cache=0).engine.decoder
    decoder.reset(1)
    decoder.feed([[1, 5, 9, 30, 31]])
    decoder.forget_last(2)  # 30, 31 rejected
    assert decoder.length == 3
    after = decoder.feed([[7]])[0, 0].copy()  # [V]
    decoder.reset(1)
    np.testing.assert_allclose(after, decoder.feed([[1, 5, 9, 7]])[0, -1], rtol=1e-5, atol=1e-5)


def test_the_cache_is_one_buffer_written_in_place_row_by_row():
    decoder = make("kv", prefix_cache=0).engine.decoder
    buffer = decoder._kv
    decoder.reset(1)
    buffer[:] = 0.0
    decoder.feed([[1, 5, 9]])
    decoder.feed([[30]])
    first_key = decoder._cache_views(1)[0][0]  # [H, T, Dh] of layer 0's key, row 0
    assert decoder._kv is buffer
    assert np.abs(first_key[:, :4]).sum(axis=(0, 2)).min() > 0  # the 4 positions fed are written
    assert not first_key[:, 4:].any()  # nothing past them: no copy of the cache anywhere else
    assert decoder._cache_values(1) is decoder._cache_entry(1)[1]  # past and present: the same OrtValues


def test_int8_drafts_and_forced_runs_never_change_the_plan():
    drafting, plain = make("kv-int8", prefix_cache=0), make("kv-int8", prefix_cache=0, draft_tokens=0,
                                                             forced_runs=False)
    for scene, say in queries(12, seed=5) * 2:  # twice: the second time the drafter knows the plan's shape
        assert drafting.generate(scene, say).text == plain.generate(scene, say).text


def test_int8_constrained_outputs_parse():
    model = make("kv-int8", candidates=2, temperature=2.0, top_k=0, prefix_cache=0)
    for scene, say in queries(60, seed=9):
        for text in model.generate(scene, say).candidate_texts:
            parse_plan(text)


def test_each_export_names_its_layout_precision_and_the_bytes_a_step_reads():
    for export, precision in (("kv", "float32"), ("kv-int8", "int8")):
        meta = make(export).session.get_modelmeta().custom_metadata_map
        assert meta["precision"] == precision
        step_bytes = int(meta["step_weight_bytes"])
        assert 0 < step_bytes < (TINY / EXPORT_FILES[export]).stat().st_size
    # int8 weights are a quarter of float32 plus a scale per 64; biases, norms and embedding rows stay float32,
    # a bigger share at width 32 than the planner's 192 (where int8 reads 0.26 of the bytes)
    assert int(make("kv-int8").session.get_modelmeta().custom_metadata_map["step_weight_bytes"]) < \
        0.6 * int(make("kv").session.get_modelmeta().custom_metadata_map["step_weight_bytes"])


def test_auto_takes_int8_then_float32_kv_then_planner_onnx(tmp_path):
    for name in ("planner.onnx", "genai_config.json", "tokenizer.json"):
        shutil.copy(TINY / name, tmp_path / name)
    assert export_path(tmp_path, "auto").name == "planner.onnx"
    with pytest.raises(ModelLoadError, match="kv"):
        export_path(tmp_path, "kv")
    shutil.copy(TINY / EXPORT_FILES["kv"], tmp_path)
    assert export_path(tmp_path, "auto").name == EXPORT_FILES["kv"]
    shutil.copy(TINY / EXPORT_FILES["kv-int8"], tmp_path)
    assert export_path(tmp_path, "auto").name == EXPORT_FILES["kv-int8"]
    assert PlannerModel(tmp_path, engine="reference").session.get_modelmeta().custom_metadata_map.get("layout") is None
    with pytest.raises(ValueError, match="export"):
        EngineConfig(export="fp8")


@pytest.mark.parametrize("export", ("kv", "kv-int8", "genai"))
def test_logits_from_skips_the_head_for_the_first_positions_only(export):
    decoder = make(export, prefix_cache=0).engine.decoder
    chunk = [1, 5, 9, 30, 31, 7]
    decoder.reset(1)
    every = decoder.feed([chunk])[0].copy()  # [6, V]
    decoder.reset(1)
    last_three = decoder.feed([chunk], logits_from=3)[0]  # [3, V]
    assert last_three.shape[0] == 3
    np.testing.assert_allclose(last_three, every[3:], rtol=1e-5, atol=1e-5)


def test_a_query_binds_no_new_shape_after_load():
    """Every step shape a typical greedy query needs (prompt + draft, single tokens, forced runs) was bound when
    the model loaded, so a query creates no OrtValue and no view of its own."""
    model = make("kv", prefix_cache=0)
    decoder = model.engine.decoder
    shapes, values = set(decoder._shapes), set(decoder._values)
    for scene, say in queries(30, seed=13):
        model.generate(scene, say)
    assert set(decoder._shapes) == shapes and set(decoder._values) == values


def test_finished_candidates_leave_the_batch_and_the_plans_stay_what_they_are():
    compacting, full = make("kv", candidates=6, temperature=1.5, top_k=0, seed=5, prefix_cache=0), \
        make("genai", candidates=6, temperature=1.5, top_k=0, seed=5, prefix_cache=0)  # genai: no compaction
    shrank = 0
    for scene, say in queries(12, seed=17):
        ours = compacting.generate(scene, say)
        assert ours.candidate_texts == full.generate(scene, say).candidate_texts
        shrank += compacting.engine.decoder.batch < 6 and len(set(ours.candidate_tokens)) > 1
    assert shrank > 0
