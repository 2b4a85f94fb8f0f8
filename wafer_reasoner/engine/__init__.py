"""The engine: decoding plans with the ONNX planner model. Pure Python and onnxruntime, no ROS.

    tokenizer.py      the model's vocabulary (words, spelled words, plan tokens, slots, tags)
    prompt.py         the prompt layout the model reads, plan text <-> plan tokens
    automaton.py      the plan automaton and the cursor that walks it while decoding
    grammar.py        that automaton built per query from planner/syntax.py and what the query may name
    decoder.py        the ONNX decoder for onnxruntime-genai's layout (planner.onnx): preallocated ping-pong KV
    static_decoder.py the decoder for the engine's own export (planner_kv*.onnx): one KV cache written in place
    drafter.py        drafts from past plan shapes, verified by greedy decoding
    fast_engine.py    prefix cache, constrained decoding, forced runs, drafts, best-of-N (verified as rows
                      finish, stopped when they cannot fit a deadline), the sampler
    planner_model.py  PlannerModel: load once, generate(scene, utterance); the reference loop

Imports ``planner`` and ``understanding``.
"""

from pathlib import Path

SHIPPED_MODEL_DIR = Path(__file__).resolve().parent.parent / "models"  # the model inside the package
