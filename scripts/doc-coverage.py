#!/usr/bin/env python3
"""Share of public declarations with a `///` doc comment, per module and in total.

Usage: scripts/doc-coverage.py [--list] [SOURCES_DIR]

A declaration counts as public when its line starts (after attributes) with `public` or `open`
(`public extension` blocks are not declarations of their own and are skipped). It counts as
documented when the nearest non-attribute line above it is a `///` line or ends a `/** */` block.
"""
import os
import re
import sys

DECL = re.compile(r'^\s*(?:@[\w().:, "]+\s+)*(?:public|open)\s+(?!extension\b)(?:(?:final|static|class|override|mutating|nonisolated|indirect|convenience|required|lazy|private\(set\)|fileprivate\(set\)|internal\(set\))\s+)*'
                  r'(func|var|let|init|struct|class|enum|protocol|actor|typealias|subscript|case|associatedtype)\b')


def scan(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    found = []
    for i, line in enumerate(lines):
        if not DECL.match(line):
            continue
        j = i - 1
        while j >= 0 and re.match(r'^\s*@\w', lines[j]):
            j -= 1
        above = lines[j].strip() if j >= 0 else ''
        documented = above.startswith('///') or above.endswith('*/')
        found.append((i + 1, line.strip(), documented))
    return found


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), '..', 'Sources')
    per_module = {}
    missing = []
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith('.swift'):
                continue
            path = os.path.join(dirpath, name)
            module = os.path.relpath(path, root).split(os.sep)[0]
            for line, text, documented in scan(path):
                total, done = per_module.get(module, (0, 0))
                per_module[module] = (total + 1, done + documented)
                if not documented:
                    missing.append(f'{os.path.relpath(path, root)}:{line}: {text[:100]}')
    all_total = sum(t for t, _ in per_module.values())
    all_done = sum(d for _, d in per_module.values())
    for module, (total, done) in sorted(per_module.items()):
        print(f'{module:16} {done:5}/{total:<5} {100 * done / max(1, total):5.1f}%')
    print(f'{"total":16} {all_done:5}/{all_total:<5} {100 * all_done / max(1, all_total):5.1f}%')
    if '--list' in sys.argv:
        print('\n'.join(missing))


main()
