# Latency against block size, log-log, one panel per collective, one line per
# implementation (a host with the accelerator dashed in the host's colour), the memcpy bound dashed (the best of the implementations'
# memcpy medians; memcpy1 for alltoallv_skew).  Reads the medians.csv written by
# perf/bench/summarize.py.
#
#   gnuplot -c perf/plot.gp RESULTS/medians.csv OUT.png RANKS [COLD [OPS]]
#
# COLD is 0 (hot buffers, the default) or 1.  OPS, a space-separated list of
# up to six ops, replaces the six all-to-all and all-gather panels (compare.sh
# --neighbor plots "cart_alltoall graph_alltoall cart_allgather
# graph_allgather" so, and the rooted and reducing collectives as "bcast
# reduce allreduce gather scatter reduce_scatter_block"); only the all-to-all
# and all-gather panels get a memcpy bound.
if (ARGC < 3) { print "usage: gnuplot -c plot.gp medians.csv out.png ranks [cold [ops]]"; exit }
data = ARG1
out = ARG2
ranks = ARG3
cold = (ARGC >= 4) ? ARG4 : "0"
ops = (ARGC >= 5) ? ARG5 : "alltoall alltoallv alltoallv_skew alltoallw allgather allgatherv"

# rows of one op/impl as "bytes avg_us", from columns op,ranks,bytes,cold,impl,avg_us
sel(op, impl) = sprintf("< awk -F, '$1==\"%s\" && $2==%s && $4==%s && $5==\"%s\" {print $3, $6}' %s | sort -n", \
                        op, ranks, cold, impl, data)

set terminal pngcairo size 1500,950 font ",10"
set output out
set datafile separator " "
set logscale xy
set xtics ("1" 1, "16" 16, "256" 256, "4K" 4096, "64K" 65536, "1M" 1048576, "16M" 16777216)
set format y "10^{%L}"
set xlabel "bytes per block"
set ylabel "latency (us)"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key bottom right opaque noenhanced
set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 0.6
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 0.6
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 0.6
set style line 4 lc rgb "#777777" lw 1 dt 2
# a host with shmcoll's accelerator preloaded (perf/compare.sh): the host's colour, dashed
set style line 5 lc rgb "#1f77b4" lw 2 pt 4 ps 0.6 dt 3
set style line 6 lc rgb "#2ca02c" lw 2 pt 8 ps 0.6 dt 3

impls = "shmcoll openmpi mpich openmpi+shmcoll mpich+shmcoll"
lsof(i) = (i <= 3) ? i : i + 1
set multiplot layout 2,(words(ops) > 4 ? 3 : 2) title sprintf("shmcoll-bench, %s ranks, %s buffers: slowest rank's time per call, median over runs (lower is better)", \
                                       ranks, (cold eq "1") ? "cold" : "hot") font ",13"
do for [o in ops] {
  set title o noenhanced
  # the bound: every rank copying at once; for the skewed alltoallv, whose
  # bytes go mostly to one rank, that rank copying alone (memcpy1)
  bop = (o eq "alltoallv_skew") ? "memcpy1" : "memcpy"
  if (strstrt(" alltoall alltoallv alltoallv_skew alltoallw allgather allgatherv ", " ".o." ") == 0) {
    plot for [i=1:5] sel(o, word(impls, i)) using 1:2 with linespoints ls lsof(i) title word(impls, i)
  } else {
    plot for [i=1:5] sel(o, word(impls, i)) using 1:2 with linespoints ls lsof(i) title word(impls, i), \
         "< awk -F, '$1==\"".bop."\" && $2==".ranks." && $4==".cold." {print $3, $6}' ".data." | sort -k1,1n -k2,2g | awk '$1!=p{print; p=$1}'" \
         using 1:2 with lines ls 4 title bop." bound"
  }
}
unset multiplot
