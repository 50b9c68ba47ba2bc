# twenty-fifth session, call 1 (call51): main ebcca28 (M) on the GPU before any change: the integration test binaries (built --release here, stripped), ouro-c-vl's conformance at 1024 workgroups (never on the GPU with the final code), ouro-c-va's remaining scenarios
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
K=.gpu/bin/gpu-heap-M
run t-ouroboros_refill 60 .gpu/bin/t-ouroboros_refill
run conf-cvl 150 $K conformance --strategy ouro-c-vl --workgroups 1024 --json $o/conf-cvl.json
run conf-cva 100 $K conformance --strategy ouro-c-va --scenario growth,exhaustion,utilisation,basic,device-bad-input,host-bad-input --workgroups 1024 --json $o/conf-cva.json
for t in ouroboros_mixed ualloc random_walk growth tbuddy bulk_semaphore ouroboros_queue_chunks ouroboros_saturated ouroboros_token_log ouroboros_vlq composition; do
  run t-$t 60 .gpu/bin/t-$t
done
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100; grep -h "test result" $o/t-*.txt
