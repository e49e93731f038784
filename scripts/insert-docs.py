#!/usr/bin/env python3
"""Inserts `///` comments above declarations: reads `PATH:LINE: text` lines (PATH relative to
Sources/, LINE the declaration's line as doc-coverage.py --list prints it) from stdin."""
import collections, os, re, sys
root = os.path.join(os.path.dirname(__file__), '..', 'Sources')
edits = collections.defaultdict(list)
for raw in sys.stdin:
    raw = raw.rstrip('\n')
    if not raw.strip() or raw.startswith('#'):
        continue
    path, line, text = raw.split(':', 2)
    edits[path].append((int(line), text.strip()))
for path, items in edits.items():
    full = os.path.join(root, path)
    lines = open(full, encoding='utf-8').read().split('\n')
    for line, text in sorted(items, reverse=True):
        i = line - 1
        while i > 0 and re.match(r'^\s*@\w', lines[i - 1]):
            i -= 1
        indent = re.match(r'^\s*', lines[line - 1]).group(0)
        if lines[i - 1].strip().startswith('///'):
            continue
        lines[i:i] = [indent + '/// ' + part for part in text.split(' \\n ')]
    open(full, 'w', encoding='utf-8').write('\n'.join(lines))
