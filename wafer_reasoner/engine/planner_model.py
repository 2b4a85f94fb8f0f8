"""The shipped ONNX planner run in-process with onnxruntime: ``PlannerModel(...).generate(scene, utterance)``.

The session is created once (weights stay resident). Two engines sit behind ``generate``:

- ``engine="fast"`` (default, engine/fast_engine.py): preallocated KV cache and IO buffers, prefix reuse,
  decoding constrained to the action language with forced runs fed as one chunk, drafts from past plan shapes,
  best-of-N as one batch with a deadline;
- ``engine="reference"``: the reference loop, one ``session.run`` per token with the cache fed back as numpy
  arrays, unconstrained argmax: the exactness oracle of the fast engine's tests (``constrained=False``).

Long commands are planned clause by clause (``understanding/clauses.py``), and a plan that leaves a grounded
mention or a said number out is continued (``understanding/coverage.py``).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from wafer_reasoner.engine import SHIPPED_MODEL_DIR
from wafer_reasoner.engine.decoder import DecoderLayout
from wafer_reasoner.engine.fast_engine import EngineConfig, FastEngine
from wafer_reasoner.engine.grammar import grammar_for_query
from wafer_reasoner.engine.prompt import FIXED_PART, Prompt, build_prompt, tokens_to_plan
from wafer_reasoner.engine.tokenizer import EOS, Tokenizer
from wafer_reasoner.planner.bounded_json import loads_bounded
from wafer_reasoner.planner.language import PlanSyntaxError, parse_plan
from wafer_reasoner.planner.scene import shown
from wafer_reasoner.planner.syntax import MAX_STEPS, SEPARATOR
from wafer_reasoner.understanding import clauses, coverage, outside
from wafer_reasoner.understanding.context import what_is_asked
from wafer_reasoner.understanding.grounding import points_at_nothing
from wafer_reasoner.understanding.stop import is_stop_command

MODEL_FILE = "planner.onnx"  # onnxruntime-genai's layout: the reference engine's, and genai's in bench_engine.py
# the fast engine's exports (training/export.py writes all three); EngineConfig.export names one
EXPORT_FILES = {"kv-int8": "planner_kv_int8.onnx", "kv": "planner_kv.onnx", "genai": MODEL_FILE}
MAX_NEW_TOKENS = 64
REFUSED = "clarify(unsupported)"  # the plan for a part outside the language (a question)
STOP_PLAN = "stop()"
MAX_CONTINUATIONS = 3  # passes after a plan that left a mention uncovered (a 4-clause command: usually 1)
FAST, REFERENCE = "fast", "reference"
ENGINES = (FAST, REFERENCE)


def _without_model(text: str) -> Generation:
    """A plan decided without the model (a stop, a refusal known by rules): no tokens, no model time."""
    return Generation(text=text, tokens=0, prefill_ms=0.0, decode_ms=0.0, total_ms=0.0, tokens_per_s=0.0)


class ModelLoadError(RuntimeError):
    """The model folder is missing, incomplete or corrupt; the message names the path and the fix."""


@dataclass(frozen=True)
class Generation:
    text: str  # plan text with real scene ids (may be unparseable: the verifier decides)
    tokens: int  # generated tokens, <eos> included
    prefill_ms: float
    decode_ms: float
    total_ms: float  # prompt building + prefill + decode, host wall time
    tokens_per_s: float  # generated tokens / (prefill + decode) time
    prompt_tokens: int = 0
    candidates: int = 1  # plans decoded (best-of-N); the text is the best valid one
    forced_tokens: int = 0  # of the returned plan, appended by the grammar without a decode step of their own
    drafted_tokens: int = 0  # of the returned plan, model choices verified in a drafted chunk (no step of their own)
    decode_steps: int = 0  # model runs after the prompt
    reused_tokens: int = 0  # prompt tokens whose KV state came from the prefix cache
    score: float = 0.0  # log-probability of the returned plan under the constrained model (best-of-N only)
    # best-of-N: every candidate in row order (row 0 is the greedy one), for callers that choose among the first n
    candidate_texts: tuple = ()  # tuple[str, ...] plan texts
    candidate_tokens: tuple = ()  # tuple[int, ...] generated tokens of each
    candidate_scores: tuple = ()  # tuple[float, ...] model scores (sum of log p)
    candidate_finished: tuple = ()  # tuple[bool, ...] whether each reached <eos>
    candidate_valid: tuple = ()  # tuple[bool, ...] finished and accepted (verified the step it finished)
    candidate_stopped: tuple = ()  # tuple[bool, ...] given up unfinished: it could no longer fit the deadline
    continued: int = 0  # passes that asked the model to go on after a plan that left a mention uncovered
    parts: int = 1  # parts of the utterance planned one by one (clause connectors between them)


def export_path(folder: Path, export: str) -> Path:
    """The model file of ``export`` in ``folder``; "auto": the first of EXPORT_FILES present (planner.onnx last)."""
    if export != "auto":
        path = folder / EXPORT_FILES[export]
        if not path.is_file():
            raise ModelLoadError(f"{path} not found: this folder has no {export!r} export. Re-export it with "
                                 f"`python -m wafer_reasoner.training.export CHECKPOINT {folder}`, or use 'auto'.")
        return path
    return next(folder / name for name in EXPORT_FILES.values() if (folder / name).is_file())


MAX_MODEL_JSON_BYTES = 4 * 1024 * 1024  # genai_config.json and tokenizer.json; the shipped ones are a few KB
MAX_MODEL_JSON_DEPTH = 8
MAX_MODEL_JSON_CONTAINERS = 256
MAX_MODEL_DIMENSION = 1 << 20  # layers, heads, head size, vocabulary, context: beyond this the file is corrupt
_THEM = re.compile(r"\bthem\b", re.IGNORECASE)
_DIMENSIONS = (("decoder", "num_hidden_layers"), ("decoder", "num_key_value_heads"), ("decoder", "head_size"),
               ("model", "vocab_size"), ("model", "context_length"))


def _read_json(path: Path):
    """A model folder's JSON file, read within caps; ModelLoadError naming the file and the fix otherwise."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_MODEL_JSON_BYTES + 1)
        return loads_bounded(raw, max_bytes=MAX_MODEL_JSON_BYTES, max_depth=MAX_MODEL_JSON_DEPTH,
                             max_containers=MAX_MODEL_JSON_CONTAINERS, what=path.name)
    except (OSError, ValueError) as error:
        raise ModelLoadError(f"cannot read {path}: {error}. Reinstall the package or run `make train`.") from None


def read_model_config(folder) -> tuple:
    """(genai_config dict, Tokenizer) of a model folder, both checked: every dimension the engine uses is a
    positive integer and the vocabulary sizes agree. Raises only ModelLoadError (the ONNX file is not read)."""
    folder = Path(folder)
    genai = _read_json(folder / "genai_config.json")
    try:
        sections = {"model": genai["model"], "decoder": genai["model"]["decoder"]}
        for section, key in _DIMENSIONS:
            value = sections[section][key]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_MODEL_DIMENSION:
                raise ValueError(f"'{key}' must be a whole number in 1..{MAX_MODEL_DIMENSION}, got {shown(value)}")
    except (KeyError, TypeError, ValueError) as error:
        raise ModelLoadError(f"bad {folder / 'genai_config.json'}: {type(error).__name__} {error}. Reinstall the "
                             f"package or run `make train`.") from None
    data = _read_json(folder / "tokenizer.json")
    try:
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), list):
            raise ValueError("expected an object with a 'tokens' list")
        tokenizer = Tokenizer(data["tokens"], data.get("kind", ""))
    except (TypeError, ValueError) as error:
        raise ModelLoadError(f"bad tokenizer at {folder / 'tokenizer.json'}: {error}") from None
    if len(tokenizer) != genai["model"]["vocab_size"]:
        raise ModelLoadError(f"tokenizer.json and genai_config.json disagree on the vocabulary size in {folder}")
    return genai, tokenizer


class PlannerModel:
    """Loads ``planner.onnx`` + ``genai_config.json`` + ``tokenizer.json`` from one folder, once."""

    def __init__(self, model_dir=None, *, threads: int = 1, max_new_tokens: int = MAX_NEW_TOKENS,
                 engine: str = FAST, engine_config: EngineConfig | None = None):
        import onnxruntime as ort  # imported here so the pure modules stay importable without it

        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")

        folder = Path(model_dir) if model_dir else SHIPPED_MODEL_DIR
        engine_config = engine_config or EngineConfig()
        if not (folder / MODEL_FILE).is_file():
            raise ModelLoadError(
                f"planner model not found at {folder / MODEL_FILE}. Point the 'model_dir' parameter at a folder "
                f"with {MODEL_FILE}, genai_config.json and tokenizer.json, or run `make train` to rebuild it."
            )
        genai, self.tokenizer = read_model_config(folder)
        model_path = export_path(folder, engine_config.export if engine == FAST else "genai")
        config = genai["model"]
        decoder = config["decoder"]
        self.num_layers = int(decoder["num_hidden_layers"])
        self.num_heads = int(decoder["num_key_value_heads"])
        self.head_size = int(decoder["head_size"])
        self.context_length = int(config["context_length"])
        self.max_new_tokens = max_new_tokens
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises several private exception types for a bad file
            raise ModelLoadError(
                f"cannot load {model_path}: {error}. The file is corrupt or not a planner model; reinstall the "
                f"package or run `make train`."
            ) from None
        self.model_dir = folder
        self.past_names = [f"past_key_values.{i}.{kind}" for i in range(self.num_layers) for kind in ("key", "value")]
        self.engine = None
        self._engine_lock = threading.Lock()  # the fast engine's buffers serve one query at a time
        if engine == FAST:
            self.engine = FastEngine(self.session, DecoderLayout.from_genai_config(genai), eos_id=self.tokenizer.eos_id,
                                     max_new_tokens=max_new_tokens, config=engine_config, tokenizer=self.tokenizer)
            self.engine.warm()

    def _empty_past(self, batch: int) -> dict:
        shape = (batch, self.num_heads, 0, self.head_size)  # [B, H, P=0, Dh]
        return {name: np.zeros(shape, dtype=np.float32) for name in self.past_names}

    def _step(self, input_ids: np.ndarray, mask: np.ndarray, past: dict):
        outputs = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask, **past})
        logits = outputs[0]  # [B, S, V]
        return logits, dict(zip(self.past_names, outputs[1:]))

    def fit_prompt(self, scene, utterance: str, antecedent: str = "") -> Prompt:
        prompt = build_prompt(scene, utterance, self.tokenizer, antecedent)
        budget = self.context_length - self.max_new_tokens
        if len(prompt.tokens) > budget:
            raise ValueError(f"prompt is {len(prompt.tokens)} tokens; at most {budget} fit (shorten the utterance)")
        return prompt

    def prepare(self, scene=None) -> None:
        """Compute the prompt's fixed start once now; later queries reuse its KV state. (The prompt holds nothing
        of the map, so ``scene`` is not needed; it is taken for callers that pass their map.)"""
        if self.engine is not None:
            with self._engine_lock:
                self.engine.pin_prefix([self.tokenizer.id(t) for t in FIXED_PART])

    def generate(self, scene, utterance: str, *, accept=None, antecedent: str = "", fits=None) -> Generation:
        """One plan for (scene, utterance). ``accept(plan_text) -> bool`` (fast engine, best-of-N) verifies each
        candidate the step it finishes: the best accepted one is returned. ``antecedent``: the scene id "it" means
        when the utterance names nothing before it (the object an earlier command acted on). Only the sentences
        that ask are planned (``understanding/context.py``: "I'm so tired. Bring me the cup." plans "Bring me the
        cup."). ``fits(prompt_tokens, lengths, done) -> n`` (best-of-N): how many leading candidates can still make
        a deadline; the others are stopped (FastEngine.decode)."""
        if is_stop_command(utterance):  # as runtime/query.answer: obeyed at once, no model (contract section 4)
            return _without_model(STOP_PLAN)
        utterance = what_is_asked(utterance, clauses.scene_names(scene))
        if self.engine is None or self.engine.config.candidates == 1:
            return self._generate_by_clause(scene, utterance, accept, antecedent)
        return self._generate_one(scene, utterance, accept, antecedent, fits)

    def _generate_one(self, scene, utterance: str, accept, antecedent: str = "", fits=None) -> Generation:
        if outside.refused_without_model(scene, utterance):  # outside the language whatever the model would say
            return _without_model(REFUSED)
        if self.engine is None:
            return self._generate_reference(scene, utterance, antecedent)
        with self._engine_lock:
            return self._generate_fast(scene, utterance, accept, antecedent, fits)

    def _generate_by_clause(self, scene, utterance: str, accept, antecedent: str) -> Generation:
        """Greedy: each part of the utterance between clause connectors planned on its own, with the state the
        parts before it leave (what the robot holds, what "it" means; understanding/clauses.py); the plans joined
        as the contract joins clauses."""
        parts = clauses.split_clauses(utterance, clauses.scene_names(scene))
        if len(parts) == 1:
            return self._generate_one(scene, utterance, accept, antecedent)
        started = time.perf_counter()
        generations, antecedents = [], [antecedent] if antecedent else []
        for part in parts:
            if generations and clauses.picks_several(generations[-1].text):
                part = _THEM.sub("those", part)  # several things before: "them" is no one object
            generations.append(self._generate_one(scene, part, None, clauses.antecedent_for(part, scene, antecedents)))
            scene = clauses.scene_after(scene, generations[-1].text)
            acted = clauses.acted_on(generations[-1].text)
            antecedents += [acted] if acted else []
        first = generations[0]
        total = lambda field: sum(getattr(g, field) for g in generations)  # noqa: E731
        model_ms = total("prefill_ms") + total("decode_ms")
        return replace(
            first, text=clauses.join_plans([g.text for g in generations]), tokens=total("tokens"),
            prefill_ms=total("prefill_ms"), decode_ms=total("decode_ms"),
            total_ms=(time.perf_counter() - started) * 1e3,
            tokens_per_s=total("tokens") / model_ms * 1e3 if model_ms > 0 else 0.0,
            prompt_tokens=total("prompt_tokens"), forced_tokens=total("forced_tokens"),
            drafted_tokens=total("drafted_tokens"), decode_steps=total("decode_steps"),
            reused_tokens=total("reused_tokens"), continued=total("continued"), parts=len(parts),
        )

    def _generate_fast(self, scene, utterance: str, accept, antecedent: str = "", fits=None) -> Generation:
        started = time.perf_counter()
        prompt = self.fit_prompt(scene, utterance, antecedent)
        if points_at_nothing(prompt.heard, prompt.grounding):  # "put it on the shelf", nothing to stand for
            return _without_model(REFUSED)
        grammar = None
        if self.engine.config.constrained:
            grammar = grammar_for_query(self.tokenizer, prompt, scene, utterance)
        ids = [self.tokenizer.id(t) for t in prompt.tokens]
        names = self.tokenizer.tokens
        check = None if accept is None else (lambda out: accept(tokens_to_plan([names[t] for t in out], prompt)))
        decoded = self.engine.decode(ids, grammar, accept=check, started=started, fits=fits)
        plan, continued, more_s = list(decoded.tokens), 0, 0.0
        if grammar is not None and decoded.candidates == 1:
            plan, continued, more_s = self._complete(utterance, prompt, ids, grammar, plan)
        model_s = decoded.prefill_s + decoded.decode_s + more_s
        rows = decoded.all_tokens if decoded.candidates > 1 else ()
        return Generation(
            continued=continued,
            text=tokens_to_plan([names[t] for t in plan], prompt),
            tokens=len(plan),
            prefill_ms=decoded.prefill_s * 1e3,
            decode_ms=(decoded.decode_s + more_s) * 1e3,  # continuation passes count as decoding
            total_ms=(time.perf_counter() - started) * 1e3,
            tokens_per_s=len(plan) / model_s if model_s > 0 else 0.0,
            prompt_tokens=len(prompt.tokens),
            candidates=decoded.candidates,
            forced_tokens=decoded.forced_tokens,
            drafted_tokens=decoded.drafted_tokens,
            decode_steps=decoded.steps,
            reused_tokens=decoded.reused_tokens,
            score=decoded.score,
            candidate_texts=tuple(tokens_to_plan([names[t] for t in row], prompt) for row in rows),
            candidate_tokens=tuple(len(row) for row in rows),
            candidate_scores=tuple(decoded.scores) if rows else (),
            candidate_finished=tuple(bool(row) and row[-1] == self.tokenizer.eos_id for row in rows),
            candidate_valid=decoded.valid if rows else (),
            candidate_stopped=decoded.stopped if rows else (),
        )

    def _complete(self, utterance: str, prompt: Prompt, ids: list, grammar, plan: list) -> tuple:
        """(plan token ids, passes, model seconds of the passes): while a plan that acts leaves a grounded mention
        or a said number uncovered (a fourth clause dropped), feed the plan and ``; `` back and let the model
        write the next step. A pass is kept only if it covers more and the whole still parses; at most
        MAX_CONTINUATIONS passes."""
        names = self.tokenizer.tokens
        need = coverage.required(prompt.grounding, prompt.heard.said, utterance)
        separator = self.tokenizer.id(SEPARATOR)
        passes, model_s = 0, 0.0
        while passes < MAX_CONTINUATIONS and plan and plan[-1] == self.tokenizer.eos_id:
            text = tokens_to_plan([names[t] for t in plan], prompt)
            gaps = need.gaps(text)
            head = plan[:-1] + [separator]
            resumed = grammar.resumed(head) if gaps and text.count(SEPARATOR) + 1 < MAX_STEPS else None
            if resumed is None or len(ids) + len(head) + self.max_new_tokens > self.context_length:
                break
            more = self.engine.decode(ids + head, resumed)
            model_s += more.prefill_s + more.decode_s
            longer = head + list(more.tokens)
            longer_text = tokens_to_plan([names[t] for t in longer], prompt)
            if len(need.gaps(longer_text)) >= len(gaps) or not _parses(longer_text):
                break
            plan, passes = longer, passes + 1
        return plan, passes, model_s

    def _generate_reference(self, scene, utterance: str, antecedent: str = "") -> Generation:
        """Greedy decoding of one plan for (scene, utterance), one session.run per token."""
        started = time.perf_counter()
        prompt = self.fit_prompt(scene, utterance, antecedent)
        if points_at_nothing(prompt.heard, prompt.grounding):
            return _without_model(REFUSED)
        ids = np.array([[self.tokenizer.id(t) for t in prompt.tokens]], dtype=np.int64)  # [1, S]
        mask = np.ones_like(ids)  # [1, T]
        prefill_start = time.perf_counter()
        logits, past = self._step(ids, mask, self._empty_past(1))
        decode_start = time.perf_counter()
        output = []
        for _ in range(self.max_new_tokens):
            next_id = int(np.argmax(logits[0, -1]))
            output.append(self.tokenizer.tokens[next_id])
            if output[-1] == EOS:
                break
            mask = np.ones((1, mask.shape[1] + 1), dtype=np.int64)
            logits, past = self._step(np.array([[next_id]], dtype=np.int64), mask, past)
        finished = time.perf_counter()
        model_s = finished - prefill_start
        return Generation(
            text=tokens_to_plan(output, prompt),
            tokens=len(output),
            prefill_ms=(decode_start - prefill_start) * 1e3,
            decode_ms=(finished - decode_start) * 1e3,
            total_ms=(finished - started) * 1e3,
            tokens_per_s=len(output) / model_s if model_s > 0 else 0.0,
            prompt_tokens=len(prompt.tokens),
        )


def _parses(text: str) -> bool:
    try:
        parse_plan(text)
    except PlanSyntaxError:
        return False
    return True
