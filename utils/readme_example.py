"""Prints one of the README's Python examples: the ```python block right
after the `<!-- MARKER ... -->` comment, MARKER being the second argument
(default `readme-python-example`; test/python/readme_example.test and
readme_torch_example.test run them in freshly installed virtual
environments)."""

import re
import sys

marker = sys.argv[2] if len(sys.argv) > 2 else "readme-python-example"
text = open(sys.argv[1]).read()
match = re.search(rf"<!-- {re.escape(marker)}\b[^>]*-->\s*```python\n(.*?)```", text, re.S)
if not match:
    sys.exit(f"{sys.argv[1]}: no {marker} block")
print(match.group(1), end="")
