#!/usr/bin/env python3
"""Generates the MPI entry points of libshmcoll from their descriptions.

    generate.py --desc-dir src/api/desc --header-in include/mpi.h.in --map-in src/libshmcoll.map.in \\
                --header BUILD/include/mpi.h --map BUILD/src/generated/libshmcoll.map --out-dir BUILD/src/generated \\
                [--stamp FILE]

Reads every src/api/desc/<area>.txt (the format: src/api/desc/README.md) and writes
  - the header: include/mpi.h.in with the MPI_ and PMPI_ prototypes of every
    function and variant in place of its @SHMCOLL_PROTOTYPES@ line;
  - the linker version script: src/libshmcoll.map.in with the MPI_ and PMPI_
    names in place of its @SHMCOLL_EXPORTS@ line;
  - for each area, generated/entry_<area>.inc: the extern "C" definition of
    every PMPI_X of the area, with MPI_X a weak alias of it, each making a
    Call, running the checks its arguments' kinds ask for (api/check.h) and
    calling the area's implementation (namespace shmcoll::api::impl), which
    src/api/<area>.cc defines before it includes this file.
Python 3 standard library only (Debian 12's python3).
"""
import argparse
import os
import re
import sys

# ---- argument kinds --------------------------------------------------------------------
#
# kind -> (the type that replaces int in the big-count (_c, _x) forms, the
# check:: function the entry point calls).  The checks in RESOLVED turn a
# handle into what the implementation then receives instead; a communicator
# also says where the later errors go.  A kind ending in '?' is an argument the
# standard does not always make significant (MPI_IN_PLACE, root only, read only
# when a count is positive, ...): the implementation checks it.
KINDS = {
    '-': (None, None),
    'buf': (None, None),
    'recvbuf': (None, 'recvNotInPlace'),
    'count': ('MPI_Count', 'count'),
    'length': ('MPI_Count', 'length'),
    'counts': ('MPI_Count', None),
    'displs': ('MPI_Aint', None),
    'datatype': (None, 'datatype'),
    'datatypes': (None, None),
    'type': (None, 'type'),
    'op': (None, None),
    'comm': (None, 'comm'),
    'comm:intra': (None, 'comm'),
    'comm:inter': (None, 'comm'),
    'comm:any': (None, 'anyComm'),
    'comm:if-init': (None, 'commIfInitialized'),
    'root': (None, 'root'),
    'dest': (None, 'dest'),
    'source': (None, 'source'),
    'tag': (None, 'tag'),
    'anytag': (None, 'anyTag'),
    'group': (None, 'group'),
    'info': (None, 'info'),
    'info?': (None, 'infoOrNull'),
    'info:writable': (None, 'info'),
    'in': (None, 'notNull'),
    'out': (None, 'notNull'),
    'inout': (None, 'notNull'),
    'status': (None, None),
    'win': (None, 'win'),
}
RESOLVED = {  # checks that resolve a handle: the implementation gets this instead
    'comm': '::shmcoll::rt::Comm*', 'anyComm': '::shmcoll::rt::Comm*', 'type': 'const ::shmcoll::dt::Type*',
    'datatype': 'const ::shmcoll::dt::Type*', 'group': '::shmcoll::rt::Group*', 'info': '::shmcoll::rt::Info*',
    'infoOrNull': '::shmcoll::rt::Info*', 'win': '::shmcoll::rt::Win*',
}

# ---- variants --------------------------------------------------------------------------
#
# c / x: the MPI-4 big-count form (_c) and the MPI-3 extent form (_x);
# i: nonblocking, MPI_I...; pinit: a persistent point-to-point request,
# MPI_..._init; init: a persistent collective, MPI_..._init with info.
# The request forms drop the status arguments; the combinations come in the
# standard's order (MPI_Ialltoallv_c, MPI_Alltoallv_init_c).
ADDS = {'i': ['MPI_Request *request'], 'pinit': ['MPI_Request *request'],
        'init': ['MPI_Info info', 'MPI_Request *request']}
MODES = {'i': 'kNonblocking', 'pinit': 'kPersistent', 'init': 'kPersistent'}
FORMS = {None: 'the', 'i': 'the nonblocking', 'pinit': 'the persistent', 'init': 'the persistent'}


class Error(Exception):
    pass


class Arg:
    def __init__(self, kind, decl, big, where):
        if kind in KINDS:
            base, self.optional = kind, False
        elif kind.endswith('?') and kind[:-1] in KINDS:
            base, self.optional = kind[:-1], True  # the implementation checks it
        else:
            raise Error(f'{where}: unknown kind "{kind}"')
        self.kind = base
        self.big_default, self.check = KINDS[base]
        if self.optional:
            self.check = None
        m = re.match(r'^(.*?)\b(\w+)\s*(\[\](?:\[\d+\])*)?$', decl.strip())
        if not m or not m.group(1).strip():
            raise Error(f'{where}: cannot read the declaration "{decl}"')
        self.type, self.name, self.array = m.group(1).strip(), m.group(2), m.group(3) or ''
        self.big = big

    def decl(self, bigcount=False):
        """The C declaration, in the big-count form when `bigcount`."""
        words = re.findall(r'\w+|\*', self.type)
        base = max(i for i, w in enumerate(words) if w not in ('const', '*'))
        if bigcount:
            repl = self.big or (self.big_default if words[base] == 'int' else None)
            if repl:
                words[base] = repl
        t = ' '.join(w for w in words if w != '*') + ' ' + ''.join(w for w in words if w == '*')
        return f'{t}{self.name}{self.array}'


class Function:
    def __init__(self, name, opts, where):
        self.name, self.where, self.args = name, where, []
        self.variants = [v for v in opts.get('variants', '').split(',') if v]
        for v in self.variants:
            if v not in ('c', 'x', 'i', 'pinit', 'init'):
                raise Error(f'{where}: unknown variant "{v}"')
        self.ret = opts.get('returns', 'int')
        self.impl = opts.get('impl')
        self.fast = opts.get('fast')
        self.fastrc = opts.get('fastrc')
        self.fastany = opts.get('fastany')
        self.initialized = 'initialized' in opts
        if not self.impl:
            raise Error(f'{where}: {name} names no implementation (impl=...)')

    def forms(self):
        """(name, big, request variant or None) for the function and each variant."""
        sizes = [(self.name, False)] + [(f'{self.name}_{v}', True) for v in self.variants if v in ('c', 'x')]
        reqs = [None] + [v for v in self.variants if v in ADDS]
        out = []
        for r in reqs:
            for n, big in sizes:
                if big and n.endswith('_x') and r:
                    continue
                if r == 'i':
                    n = 'MPI_I' + n[4].lower() + n[5:]
                elif r:
                    n = re.sub(r'(_c|_x)?$', lambda m: '_init' + (m.group(1) or ''), n, count=1)
                out.append((n, big, r))
        return out


def parse(path):
    title, funcs, callbacks, cur = None, [], [], None
    with open(path, encoding='utf-8') as f:
        for no, raw in enumerate(f, 1):
            where = f'{os.path.basename(path)}:{no}'
            line = raw.split('#', 1)[0].rstrip()
            if raw.startswith('#') and title is None:
                title = raw[1:].strip()
            if not line.strip():
                continue
            if not line[0].isspace():
                words = line.split()
                if words[0] == 'callback':
                    if len(words) != 3:
                        raise Error(f'{where}: want "callback <NAME> <function type>"')
                    callbacks.append((words[1], words[2]))
                    cur = None
                    continue
                if not words[0].startswith('MPI_'):
                    raise Error(f'{where}: a function name starts with MPI_')
                opts = {}
                for w in words[1:]:
                    k, _, v = w.partition('=')
                    opts[k] = v
                cur = Function(words[0], opts, where)
                funcs.append(cur)
                continue
            if cur is None:
                raise Error(f'{where}: an argument outside a function')
            kind, _, rest = line.strip().partition(' ')
            decl, _, big = rest.partition('|')
            cur.args.append(Arg(kind, decl, big.strip() or None, where))
    if not title:
        raise Error(f'{path}: the first line, a comment, is the section title')
    return title, funcs, callbacks


def params(fn, big, req, style):
    ps = [a.decl(big) for a in fn.args if not (req and a.kind == 'status')]
    ps += ADDS.get(req, [])
    return ', '.join(ps) if ps else ('void' if style == 'c' else '')


def wrap(text, width=118, indent=4):
    """Wraps a prototype at its commas."""
    if len(text) <= width:
        return text
    lines, cur = [], ''
    for piece in re.split(r'(?<=,) ', text):
        if cur and len(cur) + 1 + len(piece) > width:
            lines.append(cur)
            cur = ' ' * indent + piece
        else:
            cur = f'{cur} {piece}' if cur else piece
    lines.append(cur)
    return '\n'.join(lines)


# ---- the entry points -------------------------------------------------------------------

def entry(fn, name, big, req, desc):
    ps = params(fn, big, req, 'cxx')
    out = [f'// {name}: desc/{fn.where}{desc}.',
           f'extern "C" __attribute__((visibility("default"))) {fn.ret} P{name}({ps}) {{']
    comms = [a for a in fn.args if a.check in ('comm', 'anyComm', 'commIfInitialized')]
    errcomm = comms[0].name if comms else 'kNoComm'
    if fn.ret != 'int' and any(a.check for a in fn.args):
        raise Error(f'{fn.where}: {fn.name} returns {fn.ret}, so it cannot report a failed check')
    if req == 'init' and not any(a.check in ('comm', 'anyComm') for a in fn.args):
        raise Error(f'{fn.where}: a persistent collective (variant init) needs a comm argument')
    # A fast path (its own checks; false or kDeclined: the path below runs them all) gets the
    # entry to itself, and the checked path becomes a function of its own that the entry calls
    # last: the fast path does not pay for the checked path's frame (its Call and guard).
    fastArgs = ", ".join(a.name for a in fn.args)
    fast = None
    if fn.fast and not big and not req:
        fast = f'  if (impl::{fn.fast}({fastArgs})) return MPI_SUCCESS;'
    if fn.fastrc and not big and not req:  # (returning the call's code: kDeclined when it did not serve)
        fast = f'  if (const int rc_ = impl::{fn.fastrc}({fastArgs}); rc_ != impl::kDeclined) return rc_;'
    if fast:
        front = out
        out = [f'[[gnu::noinline]] static {fn.ret} checked_{name}({ps}) {{']
        if fn.fastany:  # (a general form of the fast path, which may make calls: first on the checked path)
            out.append(f'  if (impl::{fn.fastany}({fastArgs})) return MPI_SUCCESS;')
    if fn.ret != 'double':  # (MPI_Wtime and MPI_Wtick touch no state)
        out.append('  shmcoll::wait::Serial serial_;  // (MPI_THREAD_MULTIPLE: wait/serial.h)')
    out.append(f'  Call call_("{name}", {errcomm});')
    body, callargs = [], []
    resolved = {}

    def check(a):
        c = a.check
        if c in RESOLVED:
            body.append(f'  {RESOLVED[c]} {a.name}_ = nullptr;')
            resolved[a.name] = f'{a.name}_'
            body.append(f'  SHMCOLL_CHECK(check::{c}(call_, "{a.name}", {a.name}, &{a.name}_));')
        elif c in ('root', 'dest', 'source'):
            if not comms:
                raise Error(f'{fn.where}: a {a.kind} argument needs a communicator argument')
            cv = f'{comms[0].name}_'
            extra = '' if c == 'root' else f'"{a.name}", '
            body.append(f'  SHMCOLL_CHECK(check::{c}(call_, {cv}, {extra}{a.name}));')
        elif c:
            body.append(f'  SHMCOLL_CHECK(check::{c}(call_, "{a.name}", {a.name}));')
        if a.kind == 'comm:intra':
            body.append(f'  SHMCOLL_CHECK(check::intracomm(call_, "{a.name}", {a.name}_));')
        elif a.kind == 'comm:inter':
            body.append(f'  SHMCOLL_CHECK(check::intercomm(call_, "{a.name}", {a.name}_));')
        elif a.kind == 'info:writable':
            body.append(f'  SHMCOLL_CHECK(check::writable(call_, "{a.name}", {a.name}));')

    wins = [a for a in fn.args if a.check == 'win']
    if fn.initialized and not comms and not wins:
        body.append('  SHMCOLL_CHECK(check::initialized(call_));')
    for a in comms + wins:  # first: they establish MPI_Init and where the other errors go
        check(a)
        if a in wins:  # the window's error handler hears of what follows
            body.append(f'  call_.win = {a.name};')
    if req:
        body.append('  SHMCOLL_CHECK(check::notNull(call_, "request", request));')
        body.append(f'  call_.mode = Mode::{MODES[req]};')
        body.append('  call_.request = request;')
        if req == 'init':
            body.append('  call_.info = info;')
            body.append('  PersistentInit held_;  // (before the checks: they add the datatypes to hold)')
            body.append('  call_.record = &held_;')
    for a in fn.args:
        if a in comms or a in wins or (req and a.kind == 'status'):
            continue
        check(a)
    for a in fn.args:
        if req and a.kind == 'status':
            callargs.append('MPI_STATUS_IGNORE')
        else:
            callargs.append(resolved.get(a.name, a.name))
    call = f'impl::{fn.impl}({", ".join(["call_"] + callargs)})'
    if req == 'init':
        call = f'finishPersistent(call_, {call})'
    elif req:
        call = f'finishStarted(call_, {call})'
    out += body
    out.append(f'  return {call};')
    out.append('}')
    if fast:
        out = [f'// The checked path of {name}.'] + out + front + [fast, f'  return checked_{name}({fastArgs});', '}']
    out.append(f'extern "C" __attribute__((visibility("default"), weak, alias("P{name}"))) {fn.ret} {name}({ps});')
    return '\n'.join(out)


def write(path, text):
    """Writes `path` unless it already holds `text` (so nothing that includes it rebuilds)."""
    try:
        with open(path, encoding='utf-8') as f:
            if f.read() == text:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    for opt in ('--desc-dir', '--header-in', '--map-in', '--header', '--map', '--out-dir'):
        ap.add_argument(opt, required=True)
    ap.add_argument('--stamp', help='a file written at every run, for the build to compare times with')
    o = ap.parse_args()
    areas = sorted(f[:-4] for f in os.listdir(o.desc_dir) if f.endswith('.txt'))
    protos, pprotos, exports, seen = [], [], [], {}
    for area in areas:
        path = os.path.join(o.desc_dir, area + '.txt')
        title, funcs, callbacks = parse(path)
        rel = f'src/api/desc/{area}.txt'
        inc = [f'// The MPI entry points of src/api/{area}.cc: {title}.',
               f'// Generated by src/api/generate.py from {rel}: edit that, not this file.',
               f'// Included at the end of src/api/{area}.cc, after the implementations it calls.',
               '#include "api/check.h"', '#include "api/request.h"', '', 'namespace shmcoll::api {', '']
        protos.append(f'/* ---- {title} ({rel}) ---- */')
        pprotos.append(f'/* {title} */')
        for cb_name, cb_type in callbacks:
            protos.append(f'{cb_type} {cb_name};')
            exports.append(cb_name)
        for fn in funcs:
            for name, big, req in fn.forms():
                if name in seen:
                    raise Error(f'{fn.where}: {name} is also described at {seen[name]}')
                seen[name] = fn.where
                ps = params(fn, big, req, 'c')
                protos.append(wrap(f'{fn.ret} {name}({ps});'))
                pprotos.append(wrap(f'{fn.ret} P{name}({ps});'))
                exports += [name, 'P' + name]
                desc = '' if name == fn.name else ' (' + ' '.join(
                    [FORMS[req]] + (['big-count'] if big else [])) + f' form of {fn.name})'
                inc += [entry(fn, name, big, req, desc), '']
        protos.append('')
        pprotos.append('')
        inc.append('}  // namespace shmcoll::api')
        write(os.path.join(o.out_dir, f'entry_{area}.inc'), '\n'.join(inc) + '\n')
    note = ('/* Generated by src/api/generate.py from include/mpi.h.in and src/api/desc/<area>.txt:\n'
            ' * edit those, not this file. */\n')
    with open(o.header_in, encoding='utf-8') as f:
        header = f.read()
    marker = '@SHMCOLL_PROTOTYPES@'
    if header.count(marker) != 1:
        raise Error(f'{o.header_in}: needs exactly one line {marker}')
    body = ('\n'.join(protos) + '\n/* ---- profiling interface: every MPI_X is also PMPI_X ---- */\n'
            + '\n'.join(pprotos))
    write(o.header, header.replace(marker, note + body.rstrip('\n')))
    with open(o.map_in, encoding='utf-8') as f:
        vmap = f.read()
    if vmap.count('@SHMCOLL_EXPORTS@') != 1:
        raise Error(f'{o.map_in}: needs exactly one @SHMCOLL_EXPORTS@')
    names = '\n'.join(f'    {n};' for n in sorted(exports)).lstrip()
    write(o.map, '/* Generated by src/api/generate.py from src/libshmcoll.map.in and src/api/desc/<area>.txt. */\n'
          + vmap.replace('@SHMCOLL_EXPORTS@', names))
    if o.stamp:
        with open(o.stamp, 'w', encoding='utf-8') as f:
            f.write(f'{len(exports)} names\n')


if __name__ == '__main__':
    try:
        main()
    except Error as e:
        print(f'generate.py: {e}', file=sys.stderr)
        sys.exit(1)
