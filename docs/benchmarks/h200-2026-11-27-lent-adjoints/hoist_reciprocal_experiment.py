"""Experiment: in each dumped kernel, divisions inside the grid-stride loop
by a value defined before the loop become products with its reciprocal,
computed once before the loop. Usage: hoist_recip.py DUMP_DIR OUT_DIR"""
import os, re, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
changed = 0
for name in os.listdir(src):
    if not name.endswith('.cl'):
        continue
    text = open(os.path.join(src, name)).read()
    loop = text.find('for (int i = get_global_id(0); i < rows;')
    if loop < 0:
        continue
    before, after = text[:loop], text[loop:]
    defined = set(re.findall(r'\b(?:double|float) (var\d+) =', before))
    recips = []
    def repl(m):
        num, den = m.group(1), m.group(2)
        if den in defined:
            if den not in recips:
                recips.append(den)
            return f'{num} * {den}_inv;'
        return m.group(0)
    new_after = re.sub(r'(\S+) / (var\d+);', repl, after)
    if not recips:
        continue
    hoisted = ''.join(f'double {d}_inv = 1 / {d};\n  ' for d in recips)
    # insert before the `if (j < cols) {` that encloses the loop, else right before the loop
    k = before.rfind('if (j < cols) {')
    k = k if k >= 0 else loop
    out = text[:k] + hoisted + text[k:loop] + new_after
    open(os.path.join(dst, name), 'w').write(out)
    changed += 1
print(f'{changed} kernels rewritten')
