# twenty-sixth session, call 3 (call57): M = main 25ea626 (call55's M); V = main + conformance kernels with one malloc/free site + ouro-c-va's token log installing the next queue chunk ahead of need (and a chunk that lost the install race pooled as emptied). Chunk-based grids of M and V alternately, twice; books at 100k x 16/64 B; V's ouro-c-va conformance at 1024 (all ten) and tests/ouroboros_token_log.rs
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
for i in 1 2; do for b in M V; do
  run grid-$b-$i 50 .gpu/bin/gpu-heap-$b bench $g --strategy bump,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/grid-$b-$i.json
done; done
for b in M V; do
  run books-$b 40 .gpu/bin/gpu-heap-$b bench --test alloc --threads 100000 --sizes 16,64 --strategy ouro-c-va --full-statistics --books --json $o/books-$b.json
done
run conf-cva-V 120 .gpu/bin/gpu-heap-V conformance --strategy ouro-c-va --workgroups 1024 --json $o/conf-cva-V.json
run t-tl-V 60 .gpu/bin/T-V-ouroboros_token_log
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt
