"""A stored verification in words: the lines ``evotune verify`` prints and the report shows
(:mod:`evotune.verify.run` plays and stores the matches; these read ``verify.json``)."""
from __future__ import annotations

import math

from ..match.resultsblock import limit_words
from ..match.scoring import elo_text


def _fmt_elo(m: dict) -> str:
    if m.get("elo") is None:  # +-inf is stored as null
        s = m.get("score", 0.5)
        elo = math.inf if s >= 1 else -math.inf if s <= 0 else None
        return elo_text(elo, None, m.get("pentanomial", ()))
    return elo_text(m.get("elo"), m.get("elo_error"), m.get("pentanomial", ()))


def describe_match(m: dict) -> str:
    """One line for a stored verification match (a MatchResult.to_dict() plus 'label')."""
    line = (f"{m.get('label', 'match')}: {m['games']} games, +{m['wins']} ={m['draws']} "
            f"-{m['losses']}, score {m['score']:.3f}, {_fmt_elo(m)}, pentanomial "
            f"{list(m.get('pentanomial', []))}, LOS {100 * m.get('los', 0.5):.1f}%")
    sp = m.get("sprt")
    if sp:
        verdict = sp.get("verdict") or "no verdict"
        line += (f", SPRT [{sp['elo0']:g}, {sp['elo1']:g}]: {verdict} (LLR {sp['llr']:.2f}, "
                 f"bounds {sp['lower']:.2f}..{sp['upper']:.2f})")
    return line


def block_where(doc: dict, m: dict) -> str:
    """The limits and openings of a stored verification match for its results block's first
    line: '3 plies, 8moves_v3.pgn' (a second limit's match: that limit in verify's words)."""
    limit = m.get("limit") or limit_words(depth=int(doc.get("depth") or 0),
                                          nodes=int(doc.get("nodes") or 0),
                                          movetime=float(doc.get("movetime") or 0.0),
                                          tc=str(doc.get("tc") or ""))
    return ", ".join(p for p in (limit, str(doc.get("openings") or "")) if p)


def describe_verification(doc: dict) -> list[str]:
    """The lines ``evotune verify`` prints before the matches: what was verified, against what,
    on which openings, limits (both, with a second limit) and seed."""
    held_out = "held-out " if doc.get("held_out", True) else ""
    limits = " and ".join(doc.get("limits") or [f"depth {doc['depth']}"])
    tail = f"{held_out}openings {doc['openings']}, {limits}, seed {doc['seed']}"
    if doc.get("kind") == "train":
        net = doc["net"]
        lines = [f"run {doc['run_id']}: {doc['description']} ({net['file']}, checksum "
                 f"{net['checksum']}; played from its copy {net['copy']}, engine "
                 f"{doc['engine']})"]
        for m in doc["matches"]:
            b = m.get("b_net")
            what = (f"{b['file']}, checksum {b['checksum']}" if b
                    else ",".join(f"{v:g}" for v in m["b"]) if len(m["b"]) <= 12
                    else f"{len(m['b'])} weights")
            lines.append(f"opponent {m['opponent']}: {what}")
        return lines + [tail]
    weights = doc["weights"]
    shown = ",".join(f"{v:g}" for v in weights) if len(weights) <= 12 else \
        f"{len(weights)} weights (evotune export {doc['run_id']} --format json)"
    return [f"run {doc['run_id']}: {doc['description']}: {shown}", tail]


def verdict_text(m: dict) -> str:
    """A stored match's SPRT verdict in words: 'H1 accepted (better)', 'H0 accepted', or 'no
    verdict after N games'."""
    sp = m.get("sprt") or {}
    if sp.get("verdict") == "H1":
        return f"H1 accepted (elo >= {sp['elo1']:g}) after {m['games']} games"
    if sp.get("verdict") == "H0":
        return f"H0 accepted (elo <= {sp['elo0']:g}) after {m['games']} games"
    return f"no verdict after {m['games']} games (LLR {sp.get('llr', 0.0):.2f})"


def verdict_lines(doc: dict) -> list[str]:
    """With an SPRT and two limits, one line per opponent giving its verdict at each limit
    (empty otherwise: each match's line already carries its verdict)."""
    if not doc.get("sprt") or len(doc.get("limits") or []) < 2:
        return []
    lines = []
    for label in dict.fromkeys(m["opponent"] for m in doc["matches"]):
        verdicts = "; ".join(f"{m['limit']}: {verdict_text(m)}" for m in doc["matches"]
                             if m["opponent"] == label)
        lines.append(f"SPRT [{doc['sprt'][0]:g}, {doc['sprt'][1]:g}] against {label}: "
                     f"{verdicts}")
    return lines
