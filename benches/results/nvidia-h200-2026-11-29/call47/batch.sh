# twenty-fourth session, call 1 (call47): M = ff8be78 (main), N = M + the chunk-based mallocs of a subgroup together (one take of their units, or a chunk per piece made at once). The chunk-based grids of M and N with bump, then conformance of N's chunk-based variants at 1024 workgroups and scale at 8192, M's rw-malloc at 1024 and 8192, and the out-of-memory test of N's ouro-c-s and M's rw-malloc
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 540 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
M=.gpu/bin/gpu-heap-M; N=.gpu/bin/gpu-heap-N
run grid-M 60 $M bench $g --strategy bump,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/grid-M.json
run grid-N 60 $N bench $g --strategy bump,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/grid-N.json
run conf-N 200 $N conformance --strategy ouro-c-s,ouro-c-va,ouro-c-vl --workgroups 1024 --json $o/conf-N.json
run conf-M 60 $M conformance --strategy rw-malloc --workgroups 1024 --json $o/conf-M.json
run scale-N 60 $N conformance --strategy ouro-c-s,ouro-c-va,ouro-c-vl,rw-malloc --scenario scale,round-trip --workgroups 8192 --json $o/scale-N.json
run oom 40 $N bench --test out-of-memory --strategy ouro-c-s,ouro-c-vl,rw-malloc --json $o/oom.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt $o/scale*.txt | cut -c1-100
