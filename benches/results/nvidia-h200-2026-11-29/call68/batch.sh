# twenty-seventh session, call 7 (call68): a diagnostic of the chunk-based mallocs' 0.41 ms rounds at 100k x 16-64 B (ouro-c-va every round, ouro-c-vl some). G6 = 217299a (main); H1 = G6 with BSEM_STALL_ROUNDS 256 (was 1024); H2 = G6 with BSEM_WAIT_ROUNDS 16 (was 64). Not for landing: does the quantum follow a semaphore bound?
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 250 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc --threads 100000,1000000 --sizes 16,64 --rounds 8 --prime --cell-secs 2 --strategy bump,ouro-c-va,ouro-c-vl"
for b in G6 H1 H2; do run c-$b 75 .gpu/bin/gpu-heap-$b bench $g --json $o/c-$b.json; done
cat $o/log.txt
