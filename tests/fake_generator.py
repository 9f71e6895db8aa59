"""A team's own generator for the command backend in tests: the job as JSON on stdin, JSON on stdout.

FAKE_GENERATOR_MODE=fail exits 3 with a message on stderr; =garbage writes text that is not JSON;
=slow sleeps past any test timeout; =judge_fail fails c4. Otherwise it answers the job's kind like a model would.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    job = json.load(sys.stdin)
    mode = os.environ.get("FAKE_GENERATOR_MODE", "")
    if mode == "fail":
        print("the pipeline is down", file=sys.stderr)
        return 3
    if mode == "garbage":
        print("not json at all")
        return 0
    if mode == "slow":
        time.sleep(30)
    kind, fields = job["kind"], job["fields"]
    if kind == "regenerate_steps":
        answer = {"reasoning_steps": [f"Regenerated step {k} (seed {job['seed']})." for k in (1, 2, 3)]}
    elif kind == "synonym":
        answer = {"Synonym Substitutions": [f"{fields['step']} [synonym {k}]" for k in range(5)]}
    elif kind == "syntactic":
        answer = {"Rewritten Sentences": [f"{fields['step']} [rewrite {k}]" for k in range(5)]}
    elif kind == "judge":
        holds = mode != "judge_fail"
        answer = {
            "criteria": {"c1": True, "c2": True, "c3": True, "c4": holds},
            "justifications": ["checked"],
        }
    else:
        answer = {"error": f"unknown kind {kind}"}
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
