"""Understanding: what an utterance says about a scene, before any model runs. Pure Python, no ROS.

    words.py      speech normalisation (fillers, stutters, spoken numbers, spelling variants)
    mentions.py   where the utterance names scene labels and map places; the annotated utterance (Heard)
    grounding.py  the contract's referring-expression rules: which object "the red cup near the table" is
    refusals.py   which labels a clarify(not_found:/ambiguous:) may name
    coverage.py   what a plan that acts must contain (every grounded object, every number said)
    clauses.py    splitting a long command at clause connectors, and joining the parts' plans
    stop.py       stop commands, obeyed without the model

Imports only ``planner``.
"""
