# nineteenth session, call 22: m14 = main 66f6c2e (bb97521 reverted: the chunk-based code is m12's) tests/ouroboros_queue_chunks.rs: the churn as CI runs it three times, then 200 dispatches with no slack twice (live and trailing log chunks after each dispatch, to tell a log that grows from one that settles higher)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
for k in 1 2 3; do run qc-$k 90 .gpu/bin/t-qc --nocapture; done
for k in 1 2; do run qc-long-$k 150 env GPU_HEAP_CHURN_DISPATCHES=200 GPU_HEAP_CHURN_SLACK=100000 .gpu/bin/t-qc virtualized_queues_keep --nocapture; done
cat $o/log.txt; grep -h "test result\|panicked" $o/*.txt; grep -ho "Ouro[A-Z]*: live and trailing.*on: \[[^]]*\]" $o/*.txt | cut -c1-400
