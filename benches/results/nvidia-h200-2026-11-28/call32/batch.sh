# twenty-first session, call 2 (call32): w (vl_link links on while enqueues hold positions past its chunk, up to 32) against v (runs of 8 whenever a quarter is free) and f (= main): w's Ouroboros root tests, ouro-p-vl/ouro-c-vl grids, conformance of ouro-p-vl and ouro-c-vl at 1024
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 555 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
for t in ouroboros_vlq ouroboros_queue_chunks ouroboros_mixed ouroboros_refill ouroboros_saturated growth composition; do run t-$t 60 .gpu/bin/t-$t; done
V="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1 --strategy bump,ouro-p-vl,ouro-c-vl"
for k in 1 2; do for b in f v w; do run vl-$b-$k 40 .gpu/bin/gpu-heap-$b bench $V --json $o/vl-$b-$k.json; done; done
run conf-w 300 .gpu/bin/gpu-heap-w conformance --strategy ouro-p-vl,ouro-c-vl --workgroups 1024 --json $o/conf-w.json
cat $o/log.txt; grep -h "test result" $o/t-*.txt; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-100
