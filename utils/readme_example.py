"""Prints the README's Python example: the ```python block right after the
`<!-- readme-python-example ... -->` marker (test/python/readme_example.test
runs it in a freshly installed virtual environment)."""

import re
import sys

text = open(sys.argv[1]).read()
match = re.search(r"<!-- readme-python-example[^>]*-->\s*```python\n(.*?)```", text, re.S)
if not match:
    sys.exit(f"{sys.argv[1]}: no readme-python-example block")
print(match.group(1), end="")
