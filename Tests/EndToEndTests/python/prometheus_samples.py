#!/usr/bin/env python3
"""Parses a Prometheus text exposition with the reference client's parser.

usage: prometheus_samples.py [FILE]   (standard input without FILE)
Prints one JSON list of samples: {"family", "type", "help", "name", "labels", "value"} ("help":
the family's # HELP text, empty without one; "type" is "unknown" without # TYPE); exits 1 with
the parser's message when the text is not valid exposition format.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1], encoding="utf-8").read() if len(sys.argv) > 1 else sys.stdin.read()
samples = []
try:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.append({"family": family.name, "type": family.type, "help": family.documentation, "name": sample.name,
                            "labels": sample.labels, "value": sample.value})
except Exception as error:  # the parser raises ValueError and others on bad input
    print(f"not Prometheus text format: {error}")
    sys.exit(1)
print(json.dumps(samples))
