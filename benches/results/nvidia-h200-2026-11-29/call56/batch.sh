# twenty-sixth session, call 2 (call56): N = main + conformance passes compiled at first dispatch, malloc and free called from one place in each conformance kernel; M = main 25ea626 (call55's M). Chunk-based conformance of N at 1024 (all ten scenarios each: the first run of cb3bbe0's shaders through every scenario on the GPU), per-scenario times against M's; tests/ouroboros_queue_chunks.rs (main)
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
run conf-cvl-N 240 .gpu/bin/gpu-heap-N conformance --strategy ouro-c-vl --workgroups 1024 --json $o/conf-cvl-N.json
run conf-cva-N 150 .gpu/bin/gpu-heap-N conformance --strategy ouro-c-va --workgroups 1024 --json $o/conf-cva-N.json
run conf-cs-N 80 .gpu/bin/gpu-heap-N conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-cs-N.json
run t-qc 60 .gpu/bin/T-ouroboros_queue_chunks
run conf-cvl-M 150 .gpu/bin/gpu-heap-M conformance --strategy ouro-c-vl --scenario churn --workgroups 1024 --json $o/conf-cvl-M.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt
