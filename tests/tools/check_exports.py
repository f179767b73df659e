#!/usr/bin/env python3
"""Checks that libshmcoll.so exports exactly the MPI functions mpi.h declares.

    check_exports.py LIBSHMCOLL.so MPI_H CC

Reads the declarations of mpi.h as the C compiler CC preprocesses it (so what
a program sees, not the generator's list) and the symbols the library defines
(nm -D --defined-only), and fails unless
  - every function mpi.h declares as MPI_X is declared as PMPI_X too, and the
    other way round, and the library exports both;
  - every predefined callback it declares (MPI_DUP_FN, ...) is exported;
  - nothing else named MPI_... or PMPI_... is exported.
"""
import re
import subprocess
import sys


def main():
    lib, header, cc = sys.argv[1:4]
    text = subprocess.run([cc, '-E', '-P', '-x', 'c', header], check=True, capture_output=True, text=True).stdout
    text = ' '.join(text.split())
    functions, callbacks = set(), set()
    for stmt in text.split(';'):
        stmt = stmt.strip().lstrip('{}').strip()
        if not stmt or stmt.startswith('typedef'):
            continue
        m = re.match(r'^[\w\s\*]*?\b(P?MPI_\w+)\s*\(', stmt)
        if m:
            functions.add(m.group(1))
            continue
        m = re.match(r'^(MPI_\w+_function)\s+(MPI_\w+)$', stmt)  # a callback declared with its function type
        if m:
            callbacks.add(m.group(2))
    syms = subprocess.run(['nm', '-D', '--defined-only', lib], check=True, capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in syms.splitlines() if line.split()}
    exported = {s.split('@')[0] for s in exported if re.match(r'^P?MPI_', s)}

    errors = []
    mpi = {f for f in functions if f.startswith('MPI_')}
    pmpi = {f for f in functions if f.startswith('PMPI_')}
    errors += [f'{f} is declared without P{f}' for f in sorted(mpi) if 'P' + f not in pmpi]
    errors += [f'{f} is declared without {f[1:]}' for f in sorted(pmpi) if f[1:] not in mpi]
    errors += [f'{f} is declared but not exported' for f in sorted(functions | callbacks) if f not in exported]
    errors += [f'{s} is exported but mpi.h does not declare it' for s in sorted(exported - functions - callbacks)]
    for e in errors:
        print('check_exports:', e)
    print(f'check_exports: mpi.h declares {len(mpi)} functions (and their PMPI_ names) and {len(callbacks)} '
          f'callbacks; the library exports {len(exported)} MPI_/PMPI_ names; {len(errors)} problems')
    return 1 if errors or not mpi else 0


if __name__ == '__main__':
    sys.exit(main())
