# twenty-sixth session, call 4 (call58): W = V (call57) + a VAQ chunk-token log's failed insertions counted by cause, bench --books recording each cause. Books of the chunk-based cells at 100k and 1M x 16/64 B
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
run books-W 120 .gpu/bin/gpu-heap-W bench --test alloc --threads 100000,1000000 --sizes 16,64 --strategy ouro-c-s,ouro-c-va,ouro-c-vl --books --json $o/books-W.json
run books-W-full 120 .gpu/bin/gpu-heap-W bench --test alloc --threads 100000,1000000 --sizes 16,64 --strategy ouro-c-va --books --full-statistics --json $o/books-W-full.json
cat $o/log.txt
