# twenty-sixth session, call 1 (call55): M = main 25ea626 (cb3bbe0's shaders, never run on the GPU), B = branch token-log-recycle (drained token-log queue chunks recycled without zeroing; fresh token positions found written counted). M's Ouroboros integration tests and ouro-c-s conformance at 1024; chunk-based grids of M and B alternately, twice; books at 100k x 16/64 B; B's conformance of ouro-c-va at 1024
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
run t-refill-M 60 .gpu/bin/T-M-ouroboros_refill
run conf-cs-M 75 .gpu/bin/gpu-heap-M conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-cs-M.json
for i in 1 2; do for b in M B; do
  run grid-$b-$i 50 .gpu/bin/gpu-heap-$b bench $g --strategy bump,ouro-c-s,ouro-c-va,ouro-c-vl --json $o/grid-$b-$i.json
done; done
for b in M B; do
  run books-$b 40 .gpu/bin/gpu-heap-$b bench --test alloc --threads 100000 --sizes 16,64 --strategy ouro-c-va,ouro-c-vl --full-statistics --books --json $o/books-$b.json
done
run conf-cva-B 80 .gpu/bin/gpu-heap-B conformance --strategy ouro-c-va --scenario churn,scale,free-all,round-trip --workgroups 1024 --json $o/conf-cva-B.json
run t-qc-M 40 .gpu/bin/T-M-ouroboros_queue_chunks
run t-tl-M 60 .gpu/bin/T-M-ouroboros_token_log
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt
