#!/usr/bin/env python3
"""What the accelerator's hierarchical algorithms save across nodes: a model.

Counts, for one call, the messages and bytes that cross each node's network
link (in one direction) and the sequential rounds that cross the network,
for the hosts' own algorithms and for the hierarchical ones of
src/accel/ (issue 23), on N nodes of R ranks each, ranks numbered node by
node (the launchers' default block placement).  Then an estimated time on a
network of the given speed.  Nothing here is measured: it is arithmetic over
the algorithms' message patterns, with the assumptions printed beside it.

  perf/model_hier.py [--nodes 16,256] [--ranks-per-node 64] [--sizes 8,65536,1048576]
                     [--gbps 100] [--alpha-us 2] [--msg-ns 20] [--post-us 0.3] [--markdown]

The hosts' algorithms (Open MPI 4.1 coll/tuned and MPICH 4.0 defaults, for
these sizes; both pick alike here):
  alltoall   small blocks (<= 256 B): Bruck, ceil(log2 P) rounds of about P/2
             blocks to rank + 2^k; larger: pairwise or all-at-once, one
             message per rank pair
  allgather  recursive doubling (P a power of two): round k swaps 2^k blocks
             with rank XOR 2^k; large totals: ring, P - 1 steps of one block
  bcast      binomial tree (small); scatter + recursive-doubling allgather
             (medium, P a power of two); scatter + ring allgather (large)
             (MPICH's choices; Open MPI's tuned bcast pipelines segments down
             trees at these sizes: other rounds, similar bytes per node)
  allreduce  recursive doubling (small); reduce-scatter by recursive halving +
             allgather by recursive doubling (large, Rabenseifner)
The hierarchical ones (one segment per node; the node's ranks share the
network work):
  alltoall   the blocks for each remote node gathered in the segment, one
             message per node pair
  allgather  each node's blocks in its segment, the nodes exchange them
             (recursive doubling over nodes, node blocks of R blocks)
  bcast      the root's node leader to the leaders (binomial over nodes),
             then the node in shared memory
  allreduce  the node folds in shared memory, each of its R ranks owns 1/R
             of the vector and runs Rabenseifner's algorithm over the nodes
             with the ranks of the same index (small: recursive doubling of
             the whole vector over the leaders)
"""
import argparse
import math


def log2c(x):
    return max(0, math.ceil(math.log2(x))) if x > 1 else 0


def ln_msgs(n):
    return log2c(n)  # a binomial tree over the nodes: log2(n) messages per node at most


def host(op, n, r, b):
    """(messages out per node, bytes out per node, network rounds) for the
    hosts' algorithm; b is the block (alltoall, allgather) or the message
    (bcast, allreduce) in bytes."""
    p = n * r
    lp = log2c(p)
    lr = log2c(r)
    if op == "alltoall":
        if b <= 256:
            msgs = byts = 0
            for k in range(lp):
                d = 1 << k
                remote = r if d >= r else d  # ranks of a node whose partner rank + d is on another node
                blocks = sum(1 for i in range(p) if i & d)
                msgs += remote
                byts += remote * blocks * b
            return msgs, byts, lp
        return r * (p - r), r * (p - r) * b, 1
    if op == "allgather":
        if p * b <= 512 * 1024:
            rounds = lp - lr
            return r * rounds, r * (p - r) * b, rounds
        return p - 1, (p - 1) * b, p - 1  # ring: one rank per node has a remote neighbour
    if op == "bcast":
        if b <= 12288:
            return 1, b, lp - lr  # binomial tree over node-aligned subtrees: each node reached once
        scatter = b * (n - 1) / n  # the binomial scatter brings each node its share once
        if b < 524288 and p & (p - 1) == 0:
            # scatter, then recursive doubling of the P pieces of b/P: the
            # rounds at distance >= R cross nodes, (P - R) pieces per rank
            return ln_msgs(n) + r * (lp - lr), scatter + r * (p - r) * b / p, 2 * (lp - lr)
        # scatter, then a ring allgather of P pieces of b/P
        return ln_msgs(n) + p - 1, scatter + (p - 1) * b / p, lp - lr + p - 1
    if op == "allreduce":
        if b <= 2048:
            rounds = lp - lr
            return r * rounds, r * rounds * b, rounds
        # recursive halving/doubling: the rounds at distance >= r cross nodes
        # and carry b/2, b/4, ... : b (1 - r/p) each way per rank
        rounds = 2 * (lp - lr)
        return r * rounds, r * 2 * b * (1 - r / p), rounds
    raise ValueError(op)


def hier(op, n, r, b):
    """The same for the hierarchical algorithm."""
    p = n * r
    ln = log2c(n)
    if op == "alltoall":
        return n - 1, r * (p - r) * b, 1
    if op == "allgather":
        return ln, (p - r) * b, ln
    if op == "bcast":
        return 1, b, ln
    if op == "allreduce":
        if b <= 2048:
            return ln, ln * b, ln
        return r * 2 * ln, 2 * b * (1 - 1 / n), 2 * ln
    raise ValueError(op)


def seconds(m, byts, rounds, a):
    link = byts / (a.gbps * 1e9 / 8)
    nic = m * a.msg_ns * 1e-9
    return rounds * a.alpha_us * 1e-6 + max(link, nic)


def human(x):
    for unit, f in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if x >= f:
            return f"{x / f:.1f} {unit}"
    return f"{x:.0f} "


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="16,256")
    ap.add_argument("--ranks-per-node", type=int, default=64)
    ap.add_argument("--sizes", default="8,65536,1048576")
    ap.add_argument("--ops", default="alltoall,allgather,bcast,allreduce")
    ap.add_argument("--gbps", type=float, default=100.0, help="network link per node, Gb/s")
    ap.add_argument("--alpha-us", type=float, default=2.0, help="latency of a network round")
    ap.add_argument("--msg-ns", type=float, default=20.0, help="NIC time per message (50 M messages/s)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    r = a.ranks_per_node
    print(f"# model: {a.gbps:g} Gb/s per node, {a.alpha_us:g} us per network round, "
          f"{a.msg_ns:g} ns of NIC time per message; {r} ranks per node")
    if a.markdown:
        print("| nodes | op | bytes | host: msgs / bytes / rounds per node | hierarchical | "
              "est. host | est. hier | hier / host |")
        print("| ---: | --- | ---: | --- | --- | ---: | ---: | ---: |")
    for n in [int(x) for x in a.nodes.split(",")]:
        for op in a.ops.split(","):
            for b in [int(x) for x in a.sizes.split(",")]:
                hm, hb, hr = host(op, n, r, b)
                qm, qb, qr = hier(op, n, r, b)
                ht, qt = seconds(hm, hb, hr, a), seconds(qm, qb, qr, a)
                cols = (f"{n}", op, human(b) + "B", f"{hm:,.0f} / {human(hb)}B / {hr}",
                        f"{qm:,.0f} / {human(qb)}B / {qr}", f"{ht * 1e6:,.1f} us", f"{qt * 1e6:,.1f} us",
                        f"{qt / ht:.2f}")
                if a.markdown:
                    print("| " + " | ".join(cols) + " |")
                else:
                    print("  ".join(cols))


if __name__ == "__main__":
    main()
